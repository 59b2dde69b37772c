export { defineAgent, pinnedVersion } from './define-agent';
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
export { decideNext, startExecution, withModelAnswer } from './decide-next';
export { Execution } from './execution';
export type { CodeStep, AdvanceOptions, Fresh, Frontier, ModelAsk } from './code-step';
export { recordedAnswer, recordableAnswer } from './model-call';
export type { ModelCall, InPlaceAnswer } from './model-call';
export type { ModelAnswer } from './model-answer';
export { JournalEntrySchema, ModelAnswerSchema, encodeJournal, decodeJournal } from './journal';
export type { JournalEntry } from './journal';
export { frontierThought } from './frontier-thought';
export { CodeModelSettingsSchema, ModelRequestSchema, resolveModelRequest } from './model-request';
export type {
  CodeModelSettings,
  CodeModelSettingsInput,
  ModelRequest,
  ResolvedModelRequest,
} from './model-request';
export { frameworkCtx } from './framework-ctx';
export { jsonForm, jsonObject, toolArguments } from './json-form';
