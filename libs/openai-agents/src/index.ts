export { durableRun, type DurableRunOptions, type DurableRunResult } from './durable-run';
export { durableModel, type DurableModelOptions, duraModelProvider, isDurableModel } from './durable-model';
export { type DuraToolRef, duraTools, type DuraToolSpec, isDuraTool } from './dura-tools';
export { durableGraphCheck } from './agent-graph';
