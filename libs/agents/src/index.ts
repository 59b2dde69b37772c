// The model and agent layer: what the planner asks to decide a run, and how replay re-derives the planner's
// appends from a log. Services, the CLI and the bench import it; it holds no connection of its own.
export type {
  CallWorstCase,
  Model,
  ModelTurn,
  SummaryTurn,
  DecideInput,
  StartInfo,
  CodeTurn,
  InputSecrets,
} from './model';
// The capability ports beside `Model`, and the models a planner is given (see model.ts).
export type { PlannerModel, ServingModel } from './model';
export type { AgentCatalog, CallCosts, ContextSummaries, CodeRuns } from './model';
export { tighterBudget, pinnedVersionOf } from './model';
export { definitionKey, KEY_UNRESOLVED_CODE } from './agent-concurrency';
export { createModelRouter } from './model-router';
export { createScriptedModel, scriptedTurn, fileCallLog } from './scripted-model';
export type { ModelCall } from './scripted-model';
export { withResolvedResults } from './resolved-results';
export {
  CAPACITY_WAIT_PREFIX,
  capacityWaitDraft,
  isKeyWait,
  keyWaitReason,
  plannerStep,
  startDraft,
  thoughtDraft,
  failedDraft,
  isFinalModelError,
} from './planner-step';
export type { AdmitInput, CallAdmission, PlannerStep, PlannerStepPorts } from './planner-step';
export { replayRun } from './replay';
export type { ReplayInput, ReplayResult } from './replay';
export type { ReplayDivergence } from './replay-compare';
export { replayModelFor, recordedModel } from './replay-model';
export type { ReplayModelOptions } from './replay-model';
export {
  createAgentModel,
  unknownAgent,
  isAgentRequest,
  CONTROL_TOOL_NAMES,
  SUMMARIZE_AT,
  KEEP_RECENT_TURNS,
} from './agents/agent-model';
export type { AgentModelDeps } from './agents/agent-model';
export type { PayloadAccess } from './payload-access';
export { AgentRegistry, loadAgentRegistry, loadAgents, defineAgents, promptHash } from './agents/registry';
export { withCodeAgents, codeAgentsOf, isCodeAgent } from './agents/code-agent-model';
export type { CodeAgentModelDeps } from './agents/code-agent-model';
export {
  createCodeContinuations,
  DEFAULT_CODE_CONTINUATIONS,
  DEFAULT_CONTINUATION_IDLE_MS,
} from './agents/code-continuations';
export type {
  CodeContinuations,
  CodeContinuationOptions,
  ContinuationStats,
} from './agents/code-continuations';
export type { ServedAgent } from './agents/registry';
export {
  AgentDefinitionSchema,
  AgentsFileSchema,
  ModelSettingsSchema,
  ModelPriceSchema,
  PlanEntrySchema,
  ParallelStepsSchema,
  callsOf,
} from './agents/definition';
export type { AgentDefinition, AgentsFile, ModelSettings, ModelPrice, PlanEntry } from './agents/definition';
export {
  buildConversation,
  callResultText,
  expandPrompt,
  promptHashOf,
  SUMMARY_PREFIX,
} from './agents/conversation';
export type { Conversation, ResultText } from './agents/conversation';
export {
  createProvider,
  createOpenAIProvider,
  createAnthropicProvider,
  OPENAI_DEFAULT_BASE_URL,
  ANTHROPIC_DEFAULT_BASE_URL,
  ANTHROPIC_VERSION,
  toolSpecsFor,
  controlToolSpecs,
  CONTROL_TOOL_SCHEMAS,
  providerToolName,
  duraToolName,
  ToolNames,
  redact,
  retryAfterMs,
  backoffMs,
  SseParser,
} from './llm';
export type {
  ChatToolSpec,
  ChatRequest,
  ChatResponse,
  ChatProvider,
  ProviderSettings,
  ProviderConfig,
  ControlToolName,
  SseEvent,
} from './llm';
