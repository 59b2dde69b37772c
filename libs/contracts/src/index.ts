export { RunIdSchema, ToolNameSchema, JsonValueSchema, JsonObjectSchema } from './ids';
export type { JsonValue, JsonObject } from './ids';
export {
  RUN_REQUEST_VERSION,
  RunRequestSchema,
  AgentSpecSchema,
  ScriptedAgentSchema,
  ScriptedStepSchema,
} from './run-request';
export type { RunRequest, AgentSpec, ScriptedAgent, ScriptedStep } from './run-request';
export { SIGNAL_VERSION, SignalRequestSchema } from './signal';
export type { SignalRequest } from './signal';
export {
  EventDataSchemas,
  EVENT_TYPES,
  CURRENT_EVENT_VERSIONS,
  DecisionSchema,
  ErrorInfoSchema,
  ToolCallSchema,
  UsageSchema,
  ModelInfoSchema,
} from './event-data';
export type { EventType, EventData, Decision, ErrorInfo, ToolCall, Usage } from './event-data';
export { EventMetaSchema, WireEventSchema, decodeEvent, newEvent, isEventType } from './envelope';
export type { EventMeta, WireEvent, RunEvent, RunEventOf, NewEvent } from './envelope';
export { UPCASTERS, upcast } from './upcasters';
export { TASK_VERSION, ToolTaskSchema, DecideTaskSchema } from './tasks';
export type { ToolTask, DecideTask } from './tasks';
export { DEAD_LETTER_VERSION, DeadLetterSchema } from './dead-letter';
export type { DeadLetter } from './dead-letter';
export {
  STREAMS,
  SUBJECTS,
  BUCKETS,
  runSubject,
  runIdFromSubject,
  toolTaskSubject,
  deadLetterSubject,
} from './wire-layout';
export { DuraError, ContractViolation } from './errors';
export { formatIssues } from './format-issues';
