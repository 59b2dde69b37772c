import fc from 'fast-check';
import type { Decision, EventData, EventType, JsonObject, JsonValue, RunEvent } from '@dura/contracts';
import { callId } from '../idempotency';
import { RunLog, requestedData, runEvent, thoughtData } from './run-log';

const TOOLS = ['http.request', 'build.image', 'deploy.service', 'mail.send'] as const;

/** Any JSON value (plain objects, finite numbers). */
export function arbJsonValue(maxDepth = 3): fc.Arbitrary<JsonValue> {
  return fc.jsonValue({ maxDepth }) as fc.Arbitrary<JsonValue>;
}

/** Tool arguments: a JSON object with a few keys. */
export function arbArgs(): fc.Arbitrary<JsonObject> {
  return fc.dictionary(fc.string({ maxLength: 8 }), arbJsonValue(2), { maxKeys: 4, noNullPrototype: true });
}

/** Run ids as the wire allows them: one NATS subject token. */
export function arbRunId(): fc.Arbitrary<string> {
  return fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/);
}

export interface CallPlan {
  tool: string;
  args: JsonObject;
  /** Retryable failures before the final observation. */
  retries: number;
  final: 'completed' | 'failed';
  /** Extra observations of the resolved call (a relay retry after the dedupe window). */
  duplicates: number;
  result: JsonValue;
}

export interface RoundPlan {
  calls: CallPlan[];
  wait: 'signal' | 'timer' | 'child' | null;
  /** An unrelated signal arrives while waiting. */
  straySignal: boolean;
  /** How observations of the round's calls interleave. */
  picks: number[];
  snapshot: boolean;
}

export type Ending =
  | 'complete'
  | 'fail'
  | 'budget'
  | 'cancel'
  | 'cancel_waiting'
  | 'cancel_with_pending'
  | 'crash_mid_decision'
  | 'waiting'
  | 'open';

/** The shape of one generated run; `buildHistory` turns it into the events a real run would log. */
export interface HistoryPlan {
  runId: string;
  intake: 'accepted' | 'rejected' | 'rejected_unrequested';
  pendingSnapshot: boolean;
  rounds: RoundPlan[];
  ending: Ending;
  tail: RoundPlan;
  /** For `crash_mid_decision`: how many of the tail's intents made it into the log. */
  recorded: number;
  /** A late duplicate observation and a snapshot after the run ended. */
  late: boolean;
  /** Sequence gaps, as on a stream shared with other runs. */
  gaps: number[];
}

const arbCall: fc.Arbitrary<CallPlan> = fc.record({
  tool: fc.constantFrom(...TOOLS),
  args: arbArgs(),
  retries: fc.integer({ min: 0, max: 2 }),
  final: fc.oneof({ arbitrary: fc.constant('completed' as const), weight: 4 }, fc.constant('failed' as const)),
  duplicates: fc.integer({ min: 0, max: 1 }),
  result: arbJsonValue(2),
});

const arbRound: fc.Arbitrary<RoundPlan> = fc.record({
  calls: fc.array(arbCall, { minLength: 1, maxLength: 3 }),
  wait: fc.constantFrom(null, null, 'signal' as const, 'timer' as const, 'child' as const),
  straySignal: fc.boolean(),
  picks: fc.array(fc.nat(5), { minLength: 1, maxLength: 6 }),
  snapshot: fc.boolean(),
});

export function arbHistoryPlan(): fc.Arbitrary<HistoryPlan> {
  return fc.record({
    runId: arbRunId(),
    intake: fc.oneof(
      { arbitrary: fc.constant('accepted' as const), weight: 10 },
      fc.constant('rejected' as const),
      fc.constant('rejected_unrequested' as const),
    ),
    pendingSnapshot: fc.boolean(),
    rounds: fc.array(arbRound, { maxLength: 4 }),
    ending: fc.constantFrom<Ending>(
      'complete',
      'fail',
      'budget',
      'cancel',
      'cancel_waiting',
      'cancel_with_pending',
      'crash_mid_decision',
      'waiting',
      'open',
    ),
    tail: arbRound,
    recorded: fc.nat(3),
    late: fc.boolean(),
    gaps: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 4 }),
  });
}

/**
 * Valid run histories: intake (sometimes rejected), start, rounds of thought → intents → observations (with retries,
 * duplicates, waits resumed by signal, timer or child run, snapshots), and an ending (completion, failure, budget,
 * cancellation with calls still in flight, a crash between a thought and its intents, or a run still going).
 */
export function arbValidHistory(): fc.Arbitrary<RunEvent[]> {
  return arbHistoryPlan().map(buildHistory);
}

export function buildHistory(plan: HistoryPlan): RunEvent[] {
  const log = new RunLog(plan.runId, plan.gaps);
  const error = { code: 'contract_violation', message: 'agent.steps.0.tool: tool name must be dotted lower-case words' };
  if (plan.intake === 'rejected_unrequested') return log.add('run_rejected', { error, issues: [error.message] }).events;
  log.request(plan.rounds.flatMap((round) => round.calls.map(({ tool, args }) => ({ tool, args }))));
  if (plan.intake === 'rejected') return log.add('run_rejected', { error }).events;
  if (plan.pendingSnapshot) log.snapshot();
  log.start();
  plan.rounds.forEach((round, r) => playRound(log, round, r));
  endRun(log, plan);
  return log.events;
}

function playRound(log: RunLog, round: RoundPlan, r: number): void {
  const observations = think(log, round.calls);
  const waitId = `wait-${r}`;
  const childRunId = `${log.runId}-child-${r}`;
  if (round.wait === 'child') {
    log.add('child_run_requested', { childRunId, request: requestedData(childRunId).request });
    log.add('wait_requested', { waitId, kind: 'child', childRunId });
  } else if (round.wait === 'signal') {
    log.add('wait_requested', { waitId, kind: 'signal', signal: 'approve' });
  } else if (round.wait === 'timer') {
    log.add('wait_requested', { waitId, kind: 'timer', until: '2030-01-01T00:00:00.000Z' });
  }
  if (round.wait !== null && round.straySignal) log.add('signal_received', { signalId: `${waitId}-x`, name: 'comment' });
  interleave(observations, round.picks).forEach((observe) => observe());
  if (round.wait === 'signal') log.add('signal_received', { signalId: `${waitId}-ok`, name: 'approve', payload: true });
  if (round.wait === 'timer') log.add('timer_fired', { waitId });
  if (round.wait === 'child') log.add('child_run_completed', { childRunId, status: 'completed', output: 'ok' });
  if (round.snapshot) log.snapshot();
}

/** Records a thought and all its intents; returns, per call, the observations still to arrive. */
function think(log: RunLog, calls: CallPlan[], recorded = calls.length): (() => void)[][] {
  const ids = calls.map((_, i) => callId(log.stepCount + i + 1));
  log.think(calls.map(({ tool, args }) => ({ tool, args }))).intents(recorded);
  return calls.map((call, i) => observationsOf(log, ids[i] ?? '', call));
}

function observationsOf(log: RunLog, id: string, call: CallPlan): (() => void)[] {
  const attempts = call.retries + 1;
  const final = (deduped: boolean) => () =>
    call.final === 'completed' ? log.complete(id, call.result, attempts, deduped) : log.fail(id, false, attempts);
  return [
    ...Array.from({ length: call.retries }, (_, a) => () => void log.fail(id, true, a + 1)),
    final(false),
    ...Array.from({ length: call.duplicates }, () => final(true)),
  ];
}

function interleave<T>(lists: T[][], picks: readonly number[]): T[] {
  const queues = lists.map((list) => [...list]);
  const out: T[] = [];
  for (let k = 0; ; k += 1) {
    const live = queues.filter((queue) => queue.length > 0);
    if (live.length === 0) return out;
    const queue = live[(picks[k % picks.length] ?? 0) % live.length] ?? [];
    out.push(...queue.splice(0, 1));
  }
}

function endRun(log: RunLog, plan: HistoryPlan): void {
  const error = { code: 'model_gave_up', message: 'cannot continue' };
  switch (plan.ending) {
    case 'complete':
      log.finish({ steps: log.stepCount });
      break;
    case 'fail':
      log.add('thought', thoughtData({ kind: 'fail', error }, log.stepCount)).add('run_failed', { error });
      break;
    case 'budget':
      log.add('budget_exceeded', { budget: 'tokens', limit: 100, used: 120 });
      log.add('run_failed', { error: { code: 'budget_exceeded', message: 'tokens: 120 > 100' } });
      break;
    case 'cancel':
      log.add('signal_received', { signalId: 'cancel-1', name: 'cancel' }).add('run_cancelled', { reason: 'user' });
      break;
    case 'cancel_waiting':
      log.add('wait_requested', { waitId: 'wait-last', kind: 'signal', signal: 'approve' });
      log.add('run_cancelled', { reason: 'nobody approved' });
      break;
    case 'cancel_with_pending': {
      const observations = think(log, plan.tail.calls);
      log.add('run_cancelled', { reason: 'user' });
      // A tool that was already running reports after the cancel; the log records it.
      interleave(observations, plan.tail.picks).forEach((observe) => observe());
      break;
    }
    case 'crash_mid_decision':
      think(log, plan.tail.calls, plan.recorded % plan.tail.calls.length);
      return;
    case 'waiting':
      log.add('wait_requested', { waitId: 'wait-last', kind: 'signal', signal: 'approve' });
      return;
    case 'open':
      return;
  }
  if (!plan.late) return;
  const lastObservation = log.events.findLast(
    (event) => event.type === 'tool_call_completed' || event.type === 'tool_call_failed',
  );
  if (lastObservation !== undefined) log.redeliver(lastObservation);
  log.snapshot();
}

const CALL_IDS = ['call-1', 'call-2', 'call-3'];
const arbCallId = fc.constantFrom(...CALL_IDS);
const arbError = fc.constant({ code: 'boom', message: 'boom' });
const arbDecision: fc.Arbitrary<Decision> = fc.oneof(
  fc
    .uniqueArray(arbCallId, { minLength: 1, maxLength: 3 })
    .map((ids) => ({ kind: 'tool_calls' as const, calls: ids.map((id) => ({ callId: id, tool: 'http.request', args: {} })) })),
  fc.constant({ kind: 'complete' as const, output: 'done' }),
  arbError.map((error) => ({ kind: 'fail' as const, error })),
);

/** Schema-valid data of every event type, from small pools so random sequences often hit real transitions. */
const ANY_DATA: { [T in EventType]: fc.Arbitrary<EventData<T>> } = {
  run_requested: fc.constant(requestedData('run-1')),
  run_started: fc.constant({}),
  run_rejected: arbError.map((error) => ({ error })),
  thought: arbDecision.map((decision) => thoughtData(decision)),
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
    kind: fc.constantFrom('signal' as const, 'timer' as const, 'child' as const),
    signal: fc.constantFrom('approve', 'cancel'),
    childRunId: fc.constant('child-1'),
  }),
  signal_received: fc.record({ signalId: fc.constant('s-1'), name: fc.constantFrom('approve', 'cancel') }),
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
  op: fc.constantFrom('drop' as const, 'swap' as const, 'duplicate' as const, 'insert' as const, 'foreign' as const),
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
