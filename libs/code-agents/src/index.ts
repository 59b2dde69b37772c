// The authoring API: what an agent's code, and a framework adapter running inside it, imports. The runtime
// that executes agents (planner, worker, replay) imports `@dura/code-agents/engine` as well.
export {
  type AgentDefinition,
  type AgentSecrets,
  type AnyCodeAgent,
  type CodeAgent,
  defineAgent,
} from './define-agent';
export { sealedSecret } from './sealed-secret';
export type {
  AgentTarget,
  ApprovalOutcome,
  Ctx,
  LoopRequest,
  LoopResult,
  SignalOutcome,
  SleepFor,
  ToolOptions,
} from './ctx';
export { AgentMisuse, NonDeterminism, NotDrivenByCtx, ToolFailure } from './errors';
export type { CodeModelSettings, CodeModelSettingsInput, ModelRequest } from './model-request';
export type { ModelAnswer } from './model-answer';
// Framework adapters (`@dura/ai-sdk`, `@dura/openai-agents`): a call made with the framework's own client,
// recorded through `ctx.modelCall`.
export { type InPlaceAnswer, type ModelCall, recordableAnswer } from './model-call';
export { frameworkCtx } from './framework-ctx';
export { jsonForm, jsonObject, toolArguments } from './json-form';
