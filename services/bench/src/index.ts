export { BenchReportSchema, DistributionSchema } from './schema';
export type { BenchReport, BenchScenarios, Distribution } from './schema';
export { runBench } from './run-bench';
export { parseBenchOptions, DEFAULT_SIZES, TINY_SIZES, SCENARIOS } from './options';
export type { BenchOptions, BenchSizes, ScenarioName } from './options';
export { formatTable } from './table';
