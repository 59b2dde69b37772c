/**
 * The metrics Dura's services expose, declared once so names, units and label keys agree across services,
 * dashboards and alerts. Each service declares the ones it owns through `metrics.counter/histogram/gauge`.
 * Names already carry their Prometheus unit suffix (the exporter adds only `_total`, to counters).
 */
import { DEFAULT_SECONDS_BOUNDARIES, type HistogramSpec, type MetricSpec } from './instruments';

export const DURA_METRICS = {
  /** planner: decide task received → decision appended, model call included. */
  decisionDuration: {
    name: 'dura_decision_duration_seconds',
    description: 'Time to reach and record one planner decision, model call included',
    unit: 's',
    labels: ['outcome'],
    boundaries: DEFAULT_SECONDS_BOUNDARIES,
  } satisfies HistogramSpec<'outcome'>,
  /** tool-gateway: one tool task, from receipt to committed result. */
  toolCallDuration: {
    name: 'dura_tool_call_duration_seconds',
    description: 'Time to execute one tool call and commit its result',
    unit: 's',
    labels: ['tool', 'outcome'],
    boundaries: DEFAULT_SECONDS_BOUNDARIES,
  } satisfies HistogramSpec<'tool' | 'outcome'>,
  /** tool-gateway: a repeat of a recorded idempotency key answered from the ledger. Shown as `_total`. */
  effectsDeduplicated: {
    name: 'dura_effects_deduplicated',
    description: 'Tool calls answered from the effect ledger instead of running the effect again',
    labels: ['tool'],
  } satisfies MetricSpec<'tool'>,
  /** Any bounded retry (publish, append, tool attempt). Shown as `_total`. */
  retries: {
    name: 'dura_retries',
    description: 'Operations retried after a retryable failure',
    labels: ['operation'],
  } satisfies MetricSpec<'operation'>,
  /** tool-gateway: age of the oldest outbox row not yet published. */
  outboxLag: {
    name: 'dura_outbox_lag_seconds',
    description: 'Age of the oldest unpublished outbox row (0 when the outbox is empty)',
    unit: 's',
    labels: [],
  } satisfies MetricSpec,
  /** tool-gateway: outbox rows not yet published. */
  outboxPending: {
    name: 'dura_outbox_pending_rows',
    description: 'Outbox rows not yet published',
    labels: [],
  } satisfies MetricSpec,
  /** Every service: messages waiting for a durable consumer (JetStream num_pending). */
  consumerPending: {
    name: 'dura_consumer_pending_messages',
    description: 'Messages in the stream not yet delivered to the durable consumer',
    labels: ['stream', 'consumer'],
  } satisfies MetricSpec<'stream' | 'consumer'>,
  /** Every service: deliveries with a delivery count above 1. Shown as `_total`. */
  consumerRedeliveries: {
    name: 'dura_consumer_redeliveries',
    description: 'Messages delivered again after a nak, an ack timeout or a crash',
    labels: ['stream', 'consumer'],
  } satisfies MetricSpec<'stream' | 'consumer'>,
  /** projector: runs in each lifecycle status. */
  runsByStatus: {
    name: 'dura_runs',
    description: 'Runs by lifecycle status, from the read model',
    labels: ['status'],
  } satisfies MetricSpec<'status'>,
  /** planner: decision appends that lost the expected-sequence race. Shown as `_total`. */
  conflictsLost: {
    name: 'dura_decision_conflicts_lost',
    description: 'Decision appends refused because another planner appended first',
    labels: [],
  } satisfies MetricSpec,
  /**
   * planner: a message holding secrets in clear (a request) that could not be erased from its stream, so the
   * secret stays on the broker's disk until the stream's max age. Alert on any increase. Shown as `_total`.
   */
  secretEraseFailures: {
    name: 'dura_secret_erase_failures',
    description: 'Messages holding secrets in clear that could not be erased from their stream',
    labels: ['stream'],
  } satisfies MetricSpec<'stream'>,
  /** planner: model calls and concurrency keys let through by flow control. Shown as `_total`. */
  flowAdmitted: {
    name: 'dura_flow_admitted',
    description: 'Model calls admitted under their model limits',
    labels: ['model', 'tenant'],
  } satisfies MetricSpec<'model' | 'tenant'>,
  /** planner: waits recorded because a limit was reached (each is a suspended run). Shown as `_total`. */
  flowWaits: {
    name: 'dura_flow_waits',
    description:
      'Waits for capacity recorded, by model or concurrency key, tenant and the limit that held the run back',
    labels: ['model', 'key', 'tenant', 'limit'],
  } satisfies MetricSpec<'model' | 'key' | 'tenant' | 'limit'>,
  /** planner: how long a wait for capacity was set to last when it was recorded. */
  flowWaitSeconds: {
    name: 'dura_flow_wait_seconds',
    description: 'Time a run waits for capacity (from the wait to the moment it may go)',
    unit: 's',
    labels: ['model', 'key', 'tenant'],
    boundaries: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800],
  } satisfies HistogramSpec<'model' | 'key' | 'tenant'>,
  /** planner: provider 429s that lowered a model's admitted rate. Shown as `_total`. */
  flowThrottled: {
    name: 'dura_flow_throttled',
    description: "Provider 429 answers that lowered a model's admitted rate",
    labels: ['model'],
  } satisfies MetricSpec<'model'>,
  /**
   * planner, projector: events or `POST /runs` requests a debounce window dropped (a later one of the key
   * replaced them). Shown as `_total`.
   */
  gateDebounced: {
    name: 'dura_gate_debounced',
    description: 'Events or requests dropped by a debounce window: a later one of the same key replaced them',
    labels: ['scope'],
  } satisfies MetricSpec<'scope'>,
  /** planner, projector: runs not started because a run of their key was in flight (skip-if-running). Shown as `_total`. */
  gateSkipped: {
    name: 'dura_gate_skipped',
    description: 'Runs not started because a run of the same key was in flight (dedupe skip-if-running)',
    labels: ['scope'],
  } satisfies MetricSpec<'scope'>,
} as const;
