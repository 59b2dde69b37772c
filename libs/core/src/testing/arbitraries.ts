import fc from 'fast-check';
import type { JsonObject, JsonValue, RunEvent } from '@dura/contracts';
import { callId } from '../idempotency';
import { RunLog, requestedData, thoughtData } from './run-log';

const TOOLS = ['http.request', 'build.image', 'deploy.service', 'mail.send'] as const;

/** Any JSON value as it comes off the wire: what `JSON.parse(JSON.stringify(v))` gives (so never -0). */
export function arbJsonValue(maxDepth = 3): fc.Arbitrary<JsonValue> {
  return fc.jsonValue({ maxDepth }).map((value) => JSON.parse(JSON.stringify(value)) as JsonValue);
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
  final: fc.oneof(
    { arbitrary: fc.constant('completed' as const), weight: 4 },
    fc.constant('failed' as const),
  ),
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
  const error = {
    code: 'contract_violation',
    message: 'agent.steps.0.tool: tool name must be dotted lower-case words',
  };
  if (plan.intake === 'rejected_unrequested')
    return log.add('run_rejected', { error, issues: [error.message] }).events;
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
  if (round.wait !== null && round.straySignal)
    log.add('signal_received', { signalId: `${waitId}-x`, name: 'comment' });
  interleave(observations, round.picks).forEach((observe) => observe());
  if (round.wait === 'signal')
    log.add('signal_received', { signalId: `${waitId}-ok`, name: 'approve', payload: true });
  if (round.wait === 'timer') log.add('timer_fired', { waitId });
  if (round.wait === 'child')
    log.add('child_run_completed', { childRunId, status: 'completed', output: 'ok' });
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
    call.final === 'completed'
      ? log.complete(id, call.result, attempts, deduped)
      : log.fail(id, false, attempts);
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
      log
        .add('signal_received', { signalId: 'cancel-1', name: 'cancel' })
        .add('run_cancelled', { reason: 'user' });
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
