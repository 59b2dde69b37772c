export { durableRun } from './durable-run';
export type { DurableRunOptions, DurableRunResult } from './durable-run';
export { durableModel, duraModelProvider, isDurableModel } from './durable-model';
export type { DurableModelOptions } from './durable-model';
export { duraTools, isDuraTool } from './dura-tools';
export type { DuraToolSpec, DuraToolRef } from './dura-tools';
export { durableGraphCheck } from './agent-graph';
