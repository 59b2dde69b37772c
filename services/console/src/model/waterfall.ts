import type { RunEvent, RunEventOf } from '@dura/contracts';
import { describeCodeStep, runAgentName } from './code-steps';
import { answerFacts, deadlineFacts, verdictAnswers } from './verdicts';

export type RowKind =
  'model' | 'code' | 'tool' | 'wait' | 'timer' | 'child' | 'budget' | 'signal' | 'run' | 'error';

/** One event of the run as a waterfall row: where its bar starts and ends, in ms from the run's first event. */
export interface WaterfallRow {
  seq: number;
  /** The event's number within its run, from 1 (`seq` is its place in the shared stream). */
  n: number;
  type: RunEvent['type'];
  kind: RowKind;
  label: string;
  startMs: number;
  /** Equal to `startMs` for an instant; absent while the span is still open (the bar runs to now). */
  endMs?: number;
  /** Short facts shown on the row: tokens and cost, duration and attempts, what a wait waits for. */
  facts: string[];
}

const KIND: Partial<Record<RunEvent['type'], RowKind>> = {
  thought: 'model',
  context_summarized: 'model',
  tool_call_requested: 'tool',
  tool_call_completed: 'tool',
  tool_call_failed: 'error',
  wait_requested: 'wait',
  signal_received: 'signal',
  timer_fired: 'timer',
  child_run_requested: 'child',
  child_run_completed: 'child',
  budget_reserved: 'budget',
  budget_exceeded: 'error',
  run_failed: 'error',
  run_rejected: 'error',
};

/** Events that end an open wait. */
const WAKES = new Set<RunEvent['type']>([
  'signal_received',
  'timer_fired',
  'child_run_completed',
  'run_cancelled',
  'run_failed',
  'run_completed',
]);

type Resolution = RunEventOf<'tool_call_completed'> | RunEventOf<'tool_call_failed'>;

const usd = (value: number | undefined) => (value === undefined ? undefined : `$${value.toFixed(4)}`);

/**
 * The rows of a run's waterfall, one per event, in log order (pure: the same events give the same rows).
 * `complete: false` says these are the run's first events only: a call whose result is not among them is
 * shown as not read yet, not as pending.
 */
export function buildWaterfall(
  events: readonly RunEvent[],
  { complete = true }: { complete?: boolean } = {},
): WaterfallRow[] {
  const first = events[0];
  if (!first) return [];
  const t0 = Date.parse(first.meta.ts);
  const at = (event: RunEvent) => Date.parse(event.meta.ts) - t0;
  const resolution = new Map<string, Resolution>();
  for (const event of events)
    if (event.type === 'tool_call_completed' || event.type === 'tool_call_failed')
      resolution.set(event.data.callId, event);
  const answers = verdictAnswers(events);
  const rows: WaterfallRow[] = [];
  let previous = 0;
  let openWaits: WaterfallRow[] = [];
  const agent = runAgentName(events);
  for (const [index, event] of events.entries()) {
    const start = at(event);
    const row: WaterfallRow = {
      seq: event.seq,
      n: index + 1,
      type: event.type,
      kind: KIND[event.type] ?? 'run',
      label: event.type,
      startMs: start,
      endMs: start,
      facts: [],
    };
    if (WAKES.has(event.type)) {
      for (const wait of openWaits) wait.endMs = start;
      openWaits = [];
    }
    describe(event, row, previous, resolution, at, complete);
    // A code agent's step reads as what its code did, not as a model turn.
    const code = event.type === 'thought' ? describeCodeStep(event.data, agent) : undefined;
    if (code) {
      row.kind = 'code';
      row.label = code.label;
      row.facts = code.facts;
    }
    // A call or wait a person answered: who (the signal), when and with what, first so it is not clipped.
    const answer =
      (event.type === 'tool_call_requested' || event.type === 'wait_requested') && event.data.callId
        ? answers.get(event.data.callId)
        : undefined;
    if (answer) row.facts.unshift(...answerFacts(answer));
    if (row.endMs === undefined && event.type === 'wait_requested') openWaits.push(row);
    rows.push(row);
    previous = start;
  }
  return rows;
}

function describe(
  event: RunEvent,
  row: WaterfallRow,
  previous: number,
  resolution: Map<string, Resolution>,
  at: (event: RunEvent) => number,
  complete: boolean,
): void {
  switch (event.type) {
    case 'thought': {
      // The model was asked after the previous event; its answer is this event.
      row.startMs = Math.min(previous, row.startMs);
      row.label = `model ${event.data.model.id}`;
      const { inputTokens, outputTokens } = event.data.usage;
      row.facts.push(`${inputTokens} in / ${outputTokens} out tokens`);
      const cost = usd(event.data.costUsd);
      if (cost) row.facts.push(cost);
      row.facts.push(`decided ${event.data.decision.kind}`);
      return;
    }
    case 'tool_call_requested': {
      row.label = `${event.data.tool} (step ${event.data.step})`;
      const end = resolution.get(event.data.callId);
      if (end) {
        row.endMs = at(end);
        row.facts.push(
          `${end.type === 'tool_call_completed' ? 'completed' : 'failed'} after ${row.endMs - row.startMs} ms`,
        );
        row.facts.push(`attempt ${end.data.attempt}`);
      } else {
        delete row.endMs;
        row.facts.push(complete ? 'pending' : 'result not read yet');
      }
      if (event.data.approval) row.facts.push('needs approval');
      return;
    }
    case 'tool_call_completed':
      row.label = `result of ${event.data.callId}`;
      row.facts.push(`${event.data.durationMs} ms`, `attempt ${event.data.attempt}`);
      if (event.data.deduped) row.facts.push('deduped');
      if (event.data.edited) row.facts.push(`edited by ${event.data.edited.by} in a fork`);
      return;
    case 'tool_call_failed':
      row.label = `${event.data.callId} failed`;
      row.facts.push(
        event.data.error.code,
        `attempt ${event.data.attempt}`,
        event.data.retryable ? 'retryable' : 'final',
      );
      return;
    case 'wait_requested':
      row.label = `wait: ${event.data.kind}${event.data.signal ? ` ${event.data.signal}` : ''}`;
      delete row.endMs;
      if (event.data.until) row.facts.push(`until ${event.data.until}`);
      if (event.data.childRunId) row.facts.push(`child ${event.data.childRunId}`);
      if (event.data.reason) row.facts.push(event.data.reason);
      row.facts.push(...deadlineFacts(event.data));
      return;
    case 'signal_received':
      row.label = `signal ${event.data.name}`;
      return;
    case 'child_run_requested':
      row.label = `child run ${event.data.childRunId}`;
      return;
    case 'child_run_completed':
      row.label = `child ${event.data.childRunId} ${event.data.status}`;
      return;
    case 'budget_reserved':
      row.label = 'budget reserved';
      row.facts.push(`${event.data.tokens} tokens`, usd(event.data.costUsd) ?? '');
      return;
    case 'budget_exceeded':
      row.label = `budget exceeded: ${event.data.budget}`;
      row.facts.push(`${event.data.used} of ${event.data.limit}`);
      return;
    case 'run_failed':
    case 'run_rejected':
      row.label = event.type;
      row.facts.push(`${event.data.error.code}: ${event.data.error.message}`);
      return;
    case 'run_cancelled':
      row.facts.push(event.data.reason);
      return;
    default:
      return;
  }
}
