/**
 * Every span attribute and span event name Dura writes, in one place, so that dashboards and the
 * acceptance tests can rely on them. Names that the OpenTelemetry semantic conventions define come from
 * `@opentelemetry/semantic-conventions` (pinned exactly, because its `incubating` entry point may rename
 * things in a minor release); Dura's own names live under `dura.*`.
 */
import {
  ATTR_ERROR_TYPE,
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_MESSAGING_CONSUMER_GROUP_NAME,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_DESTINATION_TEMPLATE,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  MESSAGING_OPERATION_TYPE_VALUE_PROCESS,
  MESSAGING_OPERATION_TYPE_VALUE_RECEIVE,
  MESSAGING_OPERATION_TYPE_VALUE_SEND,
} from '@opentelemetry/semantic-conventions/incubating';

/** Resource attributes (who emitted the telemetry). */
export const RESOURCE_ATTRS = {
  serviceName: ATTR_SERVICE_NAME,
  serviceVersion: ATTR_SERVICE_VERSION,
  serviceInstanceId: ATTR_SERVICE_INSTANCE_ID,
} as const;

/** Messaging attributes, per OpenTelemetry's messaging semantic conventions. */
export const MESSAGING_ATTRS = {
  system: ATTR_MESSAGING_SYSTEM,
  destinationName: ATTR_MESSAGING_DESTINATION_NAME,
  destinationTemplate: ATTR_MESSAGING_DESTINATION_TEMPLATE,
  operationType: ATTR_MESSAGING_OPERATION_TYPE,
  operationName: ATTR_MESSAGING_OPERATION_NAME,
  messageId: ATTR_MESSAGING_MESSAGE_ID,
  consumerGroupName: ATTR_MESSAGING_CONSUMER_GROUP_NAME,
} as const;

/** `messaging.system` for everything Dura sends over NATS (the conventions list no value for NATS yet). */
export const MESSAGING_SYSTEM_NATS = 'nats';

/**
 * `messaging.operation.type` values. A publish is `send`: the conventions deprecated `publish` in its favour,
 * and `messaging.operation.name` keeps the system's own word (`publish`).
 */
export const MESSAGING_OPERATION = {
  send: MESSAGING_OPERATION_TYPE_VALUE_SEND,
  receive: MESSAGING_OPERATION_TYPE_VALUE_RECEIVE,
  process: MESSAGING_OPERATION_TYPE_VALUE_PROCESS,
} as const;

export type MessagingOperationType = (typeof MESSAGING_OPERATION)[keyof typeof MESSAGING_OPERATION];

/** Model-call attributes, per the GenAI semantic conventions. */
export const GEN_AI_ATTRS = {
  operationName: ATTR_GEN_AI_OPERATION_NAME,
  requestModel: ATTR_GEN_AI_REQUEST_MODEL,
  responseModel: ATTR_GEN_AI_RESPONSE_MODEL,
  inputTokens: ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  outputTokens: ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} as const;

/** `error.type` on a failed span: the error's `code` when it has one, else its class name. */
export const ERROR_TYPE_ATTR = ATTR_ERROR_TYPE;

/** Dura's own attributes: what a run, a decision and a tool call are, for search in a trace UI. */
export const DURA_ATTRS = {
  runId: 'dura.run.id',
  runStatus: 'dura.run.status',
  eventType: 'dura.event.type',
  eventSeq: 'dura.event.seq',
  decisionSeq: 'dura.decision.seq',
  toolName: 'dura.tool.name',
  toolCallId: 'dura.tool.call_id',
  idempotencyKey: 'dura.tool.idempotency_key',
  attempt: 'dura.tool.attempt',
  deduped: 'dura.tool.deduped',
  deliveryCount: 'dura.message.delivery_count',
} as const;

/** Span event names. */
export const DURA_SPAN_EVENTS = {
  /** On the run span of a process that picks a run up again from its log (same trace as before). */
  runResumed: 'dura.run.resumed',
  /** A decision append lost the expected-sequence race to another planner. */
  conflictLost: 'dura.decision.conflict_lost',
} as const;
