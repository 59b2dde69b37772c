// The authoring API: what an agent's code, and a framework adapter running inside it, imports. The runtime
// that executes agents (planner, worker, replay) imports `@dura/code-agents/engine` as well.
export { defineAgent } from './define-agent';
export type { CodeAgent, AnyCodeAgent, AgentDefinition, AgentSecrets } from './define-agent';
export { sealedSecret } from './sealed-secret';
export type {
  Ctx,
  LoopRequest,
  LoopResult,
  SleepFor,
  SignalOutcome,
  ApprovalOutcome,
  ToolOptions,
  AgentTarget,
} from './ctx';
export { ToolFailure, NonDeterminism, NotDrivenByCtx, AgentMisuse } from './errors';
export type { ModelRequest, CodeModelSettings, CodeModelSettingsInput } from './model-request';
export type { ModelAnswer } from './model-answer';
// Framework adapters (`@dura/ai-sdk`, `@dura/openai-agents`): a call made with the framework's own client,
// recorded through `ctx.modelCall`.
export { recordableAnswer } from './model-call';
export type { ModelCall, InPlaceAnswer } from './model-call';
export { frameworkCtx } from './framework-ctx';
export { jsonForm, jsonObject, toolArguments } from './json-form';
