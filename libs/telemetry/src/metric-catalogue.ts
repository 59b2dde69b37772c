/**
 * The metrics Dura's services expose, declared once so names, units and label keys agree across services,
 * dashboards and alerts. Each service declares the ones it owns through `metrics.counter/histogram/gauge`.
 * Names already carry their Prometheus unit suffix (the exporter adds only `_total`, to counters).
 */
import { DEFAULT_SECONDS_BOUNDARIES, type HistogramSpec, type MetricSpec } from './instruments';

export const DURA_METRICS = {
  /** planner: decide task received → decision appended, model call included. */
  decisionDuration: histogram(
    'dura_decision_duration_seconds',
    'Time to reach and record one planner decision, model call included',
    ['outcome'],
    DEFAULT_SECONDS_BOUNDARIES,
  ),
  /** tool-gateway: one tool task, from receipt to committed result. */
  toolCallDuration: histogram(
    'dura_tool_call_duration_seconds',
    'Time to execute one tool call and commit its result',
    ['tool', 'outcome'],
    DEFAULT_SECONDS_BOUNDARIES,
  ),
  /** tool-gateway: a repeat of a recorded idempotency key answered from the ledger. Shown as `_total`. */
  effectsDeduplicated: metric(
    'dura_effects_deduplicated',
    'Tool calls answered from the effect ledger instead of running the effect again',
    ['tool'],
  ),
  /** Any bounded retry (publish, append, tool attempt). Shown as `_total`. */
  retries: metric('dura_retries', 'Operations retried after a retryable failure', ['operation']),
  /** tool-gateway: age of the oldest outbox row not yet published. */
  outboxLag: metric(
    'dura_outbox_lag_seconds',
    'Age of the oldest unpublished outbox row (0 when the outbox is empty)',
    [],
    's',
  ),
  /** tool-gateway: outbox rows not yet published. */
  outboxPending: metric('dura_outbox_pending_rows', 'Outbox rows not yet published', []),
  /** Every service: messages waiting for a durable consumer (JetStream num_pending). */
  consumerPending: metric(
    'dura_consumer_pending_messages',
    'Messages in the stream not yet delivered to the durable consumer',
    ['stream', 'consumer'],
  ),
  /** Every service: deliveries with a delivery count above 1. Shown as `_total`. */
  consumerRedeliveries: metric(
    'dura_consumer_redeliveries',
    'Messages delivered again after a nak, an ack timeout or a crash',
    ['stream', 'consumer'],
  ),
  /**
   * Every service: durable consumers recreated because their stream lost messages it had stored (the consumer
   * stood past the stream's last sequence). Alert on any increase. Shown as `_total`.
   */
  consumerRecreated: metric(
    'dura_consumer_recreated',
    'Durable consumers recreated because their stream lost stored messages and rewound',
    ['stream', 'consumer'],
  ),
  /** projector: runs in each lifecycle status. */
  runsByStatus: metric('dura_runs', 'Runs by lifecycle status, from the read model', ['status']),
  /** planner: decision appends that lost the expected-sequence race. Shown as `_total`. */
  conflictsLost: metric(
    'dura_decision_conflicts_lost',
    'Decision appends refused because another planner appended first',
    [],
  ),
  /**
   * planner: a message holding secrets in clear (a request) that could not be erased from its stream, so the
   * secret stays on the broker's disk until the stream's max age. Alert on any increase. Shown as `_total`.
   */
  secretEraseFailures: metric(
    'dura_secret_erase_failures',
    'Messages holding secrets in clear that could not be erased from their stream',
    ['stream'],
  ),
  /** planner: model calls and concurrency keys let through by flow control. Shown as `_total`. */
  flowAdmitted: metric('dura_flow_admitted', 'Model calls admitted under their model limits', [
    'model',
    'tenant',
  ]),
  /** planner: waits recorded because a limit was reached (each is a suspended run). Shown as `_total`. */
  flowWaits: metric(
    'dura_flow_waits',
    'Waits for capacity recorded, by model or concurrency key, tenant and the limit that held the run back',
    ['model', 'key', 'tenant', 'limit'],
  ),
  /** planner: how long a wait for capacity was set to last when it was recorded. */
  flowWaitSeconds: histogram(
    'dura_flow_wait_seconds',
    'Time a run waits for capacity (from the wait to the moment it may go)',
    ['model', 'key', 'tenant'],
    [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800],
  ),
  /** planner: provider 429s that lowered a model's admitted rate. Shown as `_total`. */
  flowThrottled: metric('dura_flow_throttled', "Provider 429 answers that lowered a model's admitted rate", [
    'model',
  ]),
  /**
   * planner, projector: events or `POST /runs` requests a debounce window dropped (a later one of the key
   * replaced them). Shown as `_total`.
   */
  gateDebounced: metric(
    'dura_gate_debounced',
    'Events or requests dropped by a debounce window: a later one of the same key replaced them',
    ['scope'],
  ),
  /** planner, projector: runs not started because a run of their key was in flight (skip-if-running). Shown as `_total`. */
  gateSkipped: metric(
    'dura_gate_skipped',
    'Runs not started because a run of the same key was in flight (dedupe skip-if-running)',
    ['scope'],
  ),
} as const;

/** A counter's or a gauge's spec: its Prometheus name, help text, label keys and UCUM unit, if any. */
function metric<L extends string = never>(
  name: string,
  description: string,
  labels: readonly L[],
  unit?: string,
): MetricSpec<L> {
  return unit === undefined ? { name, description, labels } : { name, description, unit, labels };
}

/** A histogram of durations in seconds, with its bucket upper bounds. */
function histogram<L extends string = never>(
  name: string,
  description: string,
  labels: readonly L[],
  boundaries: readonly number[],
): HistogramSpec<L> {
  return { ...metric(name, description, labels, 's'), boundaries };
}
