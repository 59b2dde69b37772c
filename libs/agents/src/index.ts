// The model and agent layer: what the planner asks to decide a run, and how replay re-derives the planner's
// appends from a log. Services, the CLI and the bench import it; it holds no connection of its own.

// `Model`, the capability ports beside it and the models a planner is given (see model.ts).
export {
  type AgentCatalog,
  type CallCosts,
  type CallWorstCase,
  type CodeRuns,
  type CodeTurn,
  type ContextSummaries,
  type DecideInput,
  type InputSecrets,
  type Model,
  type ModelTurn,
  pinnedVersionOf,
  type PlannerModel,
  type ServingModel,
  type StartInfo,
  type SummaryTurn,
  tighterBudget,
} from './model';
export { definitionKey, KEY_UNRESOLVED_CODE } from './agent-concurrency';
export { createModelRouter } from './model-router';
export { createScriptedModel, fileCallLog, type ModelCall, scriptedTurn } from './scripted-model';
export { withResolvedResults } from './resolved-results';
export {
  type AdmitInput,
  type CallAdmission,
  CAPACITY_WAIT_PREFIX,
  capacityWaitDraft,
  failedDraft,
  isFinalModelError,
  isKeyWait,
  keyWaitReason,
  plannerStep,
  type PlannerStep,
  type PlannerStepPorts,
  startDraft,
  thoughtDraft,
} from './planner-step';
export { type ReplayInput, type ReplayResult, replayRun } from './replay';
export type { ReplayDivergence } from './replay-compare';
export { recordedModel, replayModelFor, type ReplayModelOptions } from './replay-model';
export {
  type AgentModelDeps,
  CONTROL_TOOL_NAMES,
  createAgentModel,
  isAgentRequest,
  KEEP_RECENT_TURNS,
  SUMMARIZE_AT,
  unknownAgent,
} from './agents/agent-model';
export type { PayloadAccess } from './payload-access';
export {
  AgentRegistry,
  defineAgents,
  loadAgentRegistry,
  loadAgents,
  promptHash,
  type ServedAgent,
} from './agents/registry';
export {
  type CodeAgentModelDeps,
  codeAgentsOf,
  isCodeAgent,
  withCodeAgents,
} from './agents/code-agent-model';
export {
  type CodeContinuationOptions,
  type CodeContinuations,
  type ContinuationStats,
  createCodeContinuations,
  DEFAULT_CODE_CONTINUATIONS,
  DEFAULT_CONTINUATION_IDLE_MS,
} from './agents/code-continuations';
export {
  type AgentDefinition,
  AgentDefinitionSchema,
  type AgentsFile,
  AgentsFileSchema,
  callsOf,
  type ModelPrice,
  ModelPriceSchema,
  type ModelSettings,
  ModelSettingsSchema,
  ParallelStepsSchema,
  type PlanEntry,
  PlanEntrySchema,
} from './agents/definition';
export {
  buildConversation,
  callResultText,
  type Conversation,
  expandPrompt,
  promptHashOf,
  type ResultText,
  SUMMARY_PREFIX,
} from './agents/conversation';
export {
  ANTHROPIC_DEFAULT_BASE_URL,
  ANTHROPIC_VERSION,
  backoffMs,
  type ChatProvider,
  type ChatRequest,
  type ChatResponse,
  type ChatToolSpec,
  CONTROL_TOOL_SCHEMAS,
  type ControlToolName,
  controlToolSpecs,
  createAnthropicProvider,
  createOpenAIProvider,
  createProvider,
  duraToolName,
  OPENAI_DEFAULT_BASE_URL,
  type ProviderConfig,
  type ProviderSettings,
  providerToolName,
  redact,
  retryAfterMs,
  type SseEvent,
  SseParser,
  ToolNames,
  toolSpecsFor,
} from './llm';
