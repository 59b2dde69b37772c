import fc from 'fast-check';
import type { Decision, EventData, EventType, RunEvent } from '@dura/contracts';
import { arbValidHistory } from './arbitraries';
import { requestedData, runEvent, thoughtData } from './run-log';

const CALL_IDS = ['call-1', 'call-2', 'call-3'];
const arbCallId = fc.constantFrom(...CALL_IDS);
const arbError = fc.constant({ code: 'boom', message: 'boom' });
const arbDecision: fc.Arbitrary<Decision> = fc.oneof(
  fc.uniqueArray(arbCallId, { minLength: 1, maxLength: 3 }).map((ids) => ({
    kind: 'tool_calls' as const,
    calls: ids.map((id) => ({ callId: id, tool: 'http.request', args: {} })),
  })),
  fc.constant({ kind: 'complete' as const, output: 'done' }),
  arbError.map((error) => ({ kind: 'fail' as const, error })),
);

/** Schema-valid data of every event type, from small pools so random sequences often hit real transitions. */
const ANY_DATA: { [T in EventType]: fc.Arbitrary<EventData<T>> } = {
  run_requested: fc.constant(requestedData('run-1')),
  run_started: fc.constant({}),
  run_rejected: arbError.map((error) => ({ error })),
  thought: arbDecision.map((decision) => thoughtData(decision)),
  budget_reserved: fc.record({ tokens: fc.nat(5000), costUsd: fc.constantFrom(0, 0.01, 0.5) }),
  context_summarized: fc.constant({
    throughStep: 1,
    summary: 'earlier steps',
    model: { id: 'm', promptVersion: '1' },
    usage: { inputTokens: 10, outputTokens: 5 },
  }),
  tool_call_requested: fc.record({
    callId: arbCallId,
    step: fc.integer({ min: 1, max: 4 }),
    tool: fc.constant('http.request'),
    args: fc.constant({}),
    idempotencyKey: fc.constant('key'),
  }),
  tool_call_completed: fc.record({
    callId: arbCallId,
    idempotencyKey: fc.constant('key'),
    result: fc.constant(null),
    attempt: fc.integer({ min: 1, max: 3 }),
    deduped: fc.boolean(),
    durationMs: fc.constant(1),
  }),
  tool_call_failed: fc.record({
    callId: arbCallId,
    idempotencyKey: fc.constant('key'),
    error: arbError,
    attempt: fc.integer({ min: 1, max: 3 }),
    retryable: fc.boolean(),
  }),
  wait_requested: fc.record({
    waitId: fc.constantFrom('w-1', 'w-2'),
    kind: fc.constantFrom(
      'signal' as const,
      'timer' as const,
      'child' as const,
      'approval' as const,
      'budget' as const,
    ),
    callId: arbCallId,
    signal: fc.constantFrom('approve', 'cancel'),
    childRunId: fc.constant('child-1'),
  }),
  signal_received: fc.record({
    signalId: fc.constant('s-1'),
    name: fc.constantFrom('approve', 'reject', 'cancel', 'raise_budget'),
  }),
  timer_fired: fc.record({ waitId: fc.constantFrom('w-1', 'w-2') }),
  child_run_requested: fc.constant({ childRunId: 'child-1', request: requestedData('child-1').request }),
  child_run_completed: fc.record({
    childRunId: fc.constantFrom('child-1', 'child-2'),
    status: fc.constantFrom('completed' as const, 'failed' as const, 'cancelled' as const),
  }),
  snapshot_taken: fc.record({ atSeq: fc.nat(50) }),
  budget_exceeded: fc.constant({ budget: 'steps' as const, limit: 3, used: 4 }),
  run_completed: fc.constant({ output: 'done' }),
  run_failed: arbError.map((error) => ({ error })),
  run_cancelled: fc.constant({ reason: 'user' }),
};

interface Draft {
  type: EventType;
  data: EventData<EventType>;
  runId: string;
  /** Sequence step from the previous event: mostly forward, sometimes repeated or backwards. */
  delta: number;
}

const arbDraft: fc.Arbitrary<Draft> = fc
  .record({
    type: fc.constantFrom(...(Object.keys(ANY_DATA) as EventType[])),
    runId: fc.constantFrom('run-1', 'run-1', 'run-1', 'run-2'),
    delta: fc.integer({ min: -1, max: 3 }),
  })
  .chain(({ type, runId, delta }) =>
    (ANY_DATA[type] as fc.Arbitrary<EventData<EventType>>).map((data) => ({ type, data, runId, delta })),
  );

const toEvent = (draft: Draft, seq: number): RunEvent =>
  runEvent(draft.type, draft.data as never, { seq, runId: draft.runId }) as RunEvent;

/** Any schema-valid event of any type at `seq`, mostly of `run-1`. */
export function arbAnyEvent(seq: number): fc.Arbitrary<RunEvent> {
  return arbDraft.map((draft) => toEvent(draft, seq));
}

/** Random sequences of schema-valid events with mostly increasing sequences: almost none are valid histories. */
export function arbRandomEvents(): fc.Arbitrary<RunEvent[]> {
  return fc.array(arbDraft, { maxLength: 40 }).map((drafts) => {
    let seq = 0;
    return drafts.map((draft) => {
      seq = Math.max(0, seq + draft.delta);
      return toEvent(draft, seq);
    });
  });
}

type Mutation = { op: 'drop' | 'swap' | 'duplicate' | 'insert' | 'foreign'; at: number; draft: Draft };

const arbMutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom(
    'drop' as const,
    'swap' as const,
    'duplicate' as const,
    'insert' as const,
    'foreign' as const,
  ),
  at: fc.nat(),
  draft: arbDraft,
});

function mutate(events: RunEvent[], { op, at, draft }: Mutation): RunEvent[] {
  if (events.length === 0) return [toEvent(draft, 1)];
  const i = at % events.length;
  const event = events[i] as RunEvent;
  const out = events.slice();
  const runId = event.meta.runId;
  switch (op) {
    case 'drop':
      out.splice(i, 1);
      break;
    case 'swap': {
      // Two events trade places but keep the sequence order: the transition is out of order, the stream is not.
      const other = out[i + 1];
      if (other !== undefined) out.splice(i, 2, { ...other, seq: event.seq }, { ...event, seq: other.seq });
      break;
    }
    case 'duplicate':
      out.splice(i + 1, 0, event);
      break;
    case 'insert':
      out.splice(i + 1, 0, toEvent({ ...draft, runId }, event.seq + 1));
      break;
    case 'foreign':
      out[i] = { ...event, meta: { ...event.meta, runId: `${runId}-other` } };
      break;
  }
  return out;
}

/** Valid histories broken by a few random edits (drop, swap, duplicate, insert, another run's event). */
export function arbMutatedHistory(): fc.Arbitrary<RunEvent[]> {
  return fc
    .tuple(arbValidHistory(), fc.array(arbMutation, { minLength: 1, maxLength: 4 }))
    .map(([events, mutations]) => mutations.reduce(mutate, events));
}

/** Garbage for the fold: random event sequences, and valid histories with random edits. */
export function arbGarbageHistory(): fc.Arbitrary<RunEvent[]> {
  return fc.oneof(arbRandomEvents(), arbMutatedHistory());
}
