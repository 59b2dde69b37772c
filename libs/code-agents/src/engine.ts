// The engine that executes code agents by replay of their run's log: what the planner, the worker, replay
// and readers of the step journal import. An agent's code imports the authoring API (`@dura/code-agents`).
export { pinnedVersion } from './define-agent';
export { decideNext, startExecution, withModelAnswer } from './decide-next';
export { Execution } from './execution';
export type { CodeStep, AdvanceOptions, Fresh, Frontier, ModelAsk } from './code-step';
export { recordedAnswer } from './model-call';
export { JournalEntrySchema, ModelAnswerSchema, encodeJournal, decodeJournal } from './journal';
export type { JournalEntry } from './journal';
export { frontierThought } from './frontier-thought';
export { CodeModelSettingsSchema, ModelRequestSchema, resolveModelRequest } from './model-request';
export type { ResolvedModelRequest } from './model-request';
