export { RunIdSchema, ToolNameSchema, JsonValueSchema, JsonObjectSchema, runIdInJson } from './ids';
export type { JsonValue, JsonObject } from './ids';
export {
  RUN_REQUEST_VERSION,
  RunRequestSchema,
  AgentSpecSchema,
  ScriptedAgentSchema,
  ScriptedStepSchema,
  AgentRefSchema,
  BudgetLimitsSchema,
  ParentRefSchema,
  RunTagSchema,
  RunTagsSchema,
  RunMetadataSchema,
  MAX_RUN_TAGS,
  MAX_TAG_LENGTH,
  MAX_METADATA_KEYS,
  DEFAULT_TENANT,
  TenantSchema,
  ConcurrencyKeySchema,
} from './run-request';
export type {
  RunRequest,
  AgentSpec,
  AgentRef,
  BudgetLimits,
  ParentRef,
  ScriptedAgent,
  ScriptedStep,
  ConcurrencyKey,
} from './run-request';
export {
  ConcurrencyKeyTemplateSchema,
  keyTemplateIssue,
  keyTemplatePaths,
  keyTemplateSecretIssue,
  resolveKeyTemplate,
} from './concurrency-key';
export type { ConcurrencyKeyTemplate, UnresolvedKey } from './concurrency-key';
export {
  RUN_STATUSES,
  RUN_LIST_SORTS,
  RUN_LIST_DEFAULT_LIMIT,
  RUN_LIST_MAX_LIMIT,
  RunStatusSchema,
  RunListSortSchema,
  RunSummarySchema,
  RunListResponseSchema,
  RunEventSchema,
  EventPageResponseSchema,
  RunStateSchema,
  RunStateQuerySchema,
  RunStateSummarySchema,
  StateAtResponseSchema,
  CausesResponseSchema,
  StreamEndSchema,
  ApiErrorSchema,
} from './read-api';
export type { RunSummary, RunListResponse, EventPageResponse, ApiErrorBody } from './read-api';
export { SIGNAL_VERSION, SignalRequestSchema } from './signal';
export type { SignalRequest } from './signal';
export {
  FORK_VERSION,
  FORK_WITH_EDIT_VERSION,
  ForkRequestSchema,
  ForkOfSchema,
  ForkChangesSchema,
  ForkEditSchema,
  ForkEditedSchema,
  EditedResultSchema,
} from './fork';
export type { ForkRequest, ForkOf, ForkChanges, ForkEdit, ForkEdited, EditedResult } from './fork';
export { API_SCOPES, ConsoleSessionSchema, ForkBodySchema, ForkAcceptedSchema } from './console';
export type { ApiScope, ConsoleSession, ForkBody } from './console';
export {
  EventDataSchemas,
  CODE_JOURNAL_TAG,
  EVENT_TYPES,
  CURRENT_EVENT_VERSIONS,
  DecisionSchema,
  ErrorInfoSchema,
  ToolCallSchema,
  UsageSchema,
  ModelInfoSchema,
  PinnedVersionSchema,
  ApprovalPolicySchema,
} from './event-data';
export type {
  EventType,
  EventData,
  Decision,
  ErrorInfo,
  ToolCall,
  Usage,
  PinnedVersion,
  ApprovalPolicy,
} from './event-data';
export { EventMetaSchema, WireEventSchema, decodeEvent, newEvent, isEventType } from './envelope';
export type { EventMeta, WireEvent, RunEvent, RunEventOf, NewEvent } from './envelope';
export { UPCASTERS, upcast } from './upcasters';
export {
  TASK_VERSION,
  TOOL_TASK_WITH_REF_VERSION,
  ToolTaskSchema,
  DecideTaskSchema,
  TimerTaskSchema,
  timerTaskMsgId,
  timerWakeMsgId,
} from './tasks';
export type { ToolTask, DecideTask, TimerTask } from './tasks';
export { DEAD_LETTER_VERSION, DeadLetterSchema } from './dead-letter';
export type { DeadLetter } from './dead-letter';
export {
  storableText,
  storableReason,
  MAX_REASON_LENGTH,
  unstorableTextIssue,
  unstorableTextPath,
} from './storable-text';
export { MESSAGE_LIMITS, EVENT_LIMITS, EVENT_ENVELOPE_DEPTH, scanJson } from './message-limits';
export type { MessageLimits, LimitProblem, JsonScan } from './message-limits';
export { decodeMessage, decodeOrThrow, depthProblem, valueLimitProblem, TASK_DECODE } from './decode-message';
export type { Decoded, DecodeFailure, DecodeOptions } from './decode-message';
export {
  STREAMS,
  SUBJECTS,
  BUCKETS,
  runSubject,
  tokensSubject,
  natsServers,
  runIdFromSubject,
  toolTaskSubject,
  deadLetterSubject,
} from './wire-layout';
export {
  TokenMessageSchema,
  TokenDiscardSchema,
  TokenGapSchema,
  TokenFinalSchema,
  TokenEndSchema,
  TOKEN_CURSOR_START,
  parseTokenFeedEvent,
  formatTokenCursor,
  parseTokenCursor,
} from './tokens';
export type { LiveText, TokenMessage, TokenFeedEvent, TokenCursor } from './tokens';
export { DuraError, ContractViolation, CONFIG_ERROR_CODE } from './errors';
export { formatIssues } from './format-issues';
export { ChatMessageSchema, ChatToolCallSchema, PromptRecordSchema } from './chat';
export type { ChatMessage, ChatToolCall, PromptRecord } from './chat';
export { PAYLOAD_URI_PREFIX, PayloadRefSchema, payloadUri } from './payload-ref';
export type { PayloadRef } from './payload-ref';
export {
  CONTROL_TOOLS,
  ControlToolSchemas,
  CONTROL_TOOL_DESCRIPTIONS,
  MAX_WAIT_SECONDS,
  isControlTool,
} from './control-tools';
export type { ControlToolName } from './control-tools';
export { NATS_SECURITY_FIELDS, resolveNatsSecurity, describeNatsAuth } from './nats-security';
export type {
  NatsAuth,
  NatsTls,
  NatsSecurity,
  NatsSecuritySettings,
  NatsSecurityResult,
} from './nats-security';
export {
  TriggerIdSchema,
  RunTemplateSchema,
  OVERLAP_POLICIES,
  CATCH_UP_POLICIES,
  DEFAULT_GRACE_MS,
  DEFAULT_CATCH_UP_WINDOW_MS,
  CatchUpSchema,
  ScheduleSpecSchema,
  SCHEDULE_ACTIONS,
  ScheduleTickSchema,
  MAX_SCHEDULE_HISTORY,
  ScheduleRecordSchema,
  scheduleRunId,
  EventTriggerSpecSchema,
  EventTriggerRecordSchema,
  triggerRunId,
} from './schedule';
export type {
  RunTemplate,
  OverlapPolicy,
  CatchUpPolicy,
  CatchUp,
  ScheduleSpec,
  ScheduleSpecInput,
  ScheduleTick,
  ScheduleRecord,
  EventTriggerSpec,
  EventTriggerRecord,
} from './schedule';
export {
  ScheduleViewSchema,
  ScheduleListSchema,
  EventTriggerBodySchema,
  EventTriggerViewSchema,
  EventTriggerListSchema,
  EventIdSchema,
  EventSubjectSchema,
  EventBodySchema,
  EventAcceptedSchema,
} from './trigger-api';
export type { ScheduleView, EventBody, EventAccepted } from './trigger-api';
export { SECRET_TAG, SecretEnvelopeSchema, isSecretEnvelope, secretPathIssue } from './secret-envelope';
export type { SecretEnvelope } from './secret-envelope';
export {
  AGENT_KINDS,
  AgentAccessSchema,
  AgentListSchema,
  CATALOGUE_VERSION,
  CatalogueAgentSchema,
  CatalogueToolSchema,
  catalogueAgentKey,
  catalogueToolKey,
  mayStart,
  TOOL_SAFETY_CLASSES,
  ToolLimitsSchema,
  ToolListSchema,
} from './catalogue';
export type {
  AgentAccess,
  AgentKind,
  AgentList,
  CatalogueAgent,
  CatalogueTool,
  ToolLimits,
  ToolList,
} from './catalogue';
export {
  MAX_DEBOUNCE_WINDOW_MS,
  MIN_DEBOUNCE_WINDOW_MS,
  GateKeySchema,
  DebounceSchema,
  DedupeSchema,
  GateFieldsSchema,
  GateWindowSchema,
  GateFiringSchema,
  GateRecordSchema,
  gateKeyIssue,
  triggerWindowRunId,
} from './run-gate';
export type {
  Debounce,
  Dedupe,
  GateFields,
  GateWindow,
  GateFiring,
  GateRecord,
  GateOutcome,
} from './run-gate';
export { GATE_ASK_VERSION, GateAskSchema, GateAnswerSchema } from './run-gate-ask';
export type { GateAsk, GateAnswer } from './run-gate-ask';
export { SubmitBodySchema, SubmitAcceptedSchema } from './submit-api';
export type { SubmitBody, SubmitAccepted } from './submit-api';
export {
  DeclaredLimitSchema,
  FlowLimitRowSchema,
  FlowLimitsResponseSchema,
  type DeclaredLimit,
  type FlowLimitRow,
  type FlowLimitsResponse,
} from './flow-limits-view';
