export { type AiSdkModel, durable, durableMiddleware, type DurableOptions } from './durable-model';
export { type DuraToolRef, duraTools, type DuraToolSpec } from './dura-tools';
