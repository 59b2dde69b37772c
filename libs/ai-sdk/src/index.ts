export { durable, durableMiddleware } from './durable-model';
export type { DurableOptions, AiSdkModel } from './durable-model';
export { duraTools } from './dura-tools';
export type { DuraToolSpec, DuraToolRef } from './dura-tools';
