export {
  type BenchReport,
  BenchReportSchema,
  type BenchScenarios,
  type Distribution,
  DistributionSchema,
} from './schema';
export { runBench } from './run-bench';
export {
  type BenchOptions,
  type BenchSizes,
  DEFAULT_SIZES,
  parseBenchOptions,
  type ScenarioName,
  SCENARIOS,
  TINY_SIZES,
} from './options';
export { formatTable } from './table';
