// Durable timers across crashes (issue 7, acceptance 2: one fault test per capability).
//
// `dura.sleep` records a timer wait; the planner hands its timer task to the gateways (`dura.task.timer`),
// which store it in Postgres (`timers`) and, once due, queue `timer_fired` through the outbox. The worst
// moments: both processes die while the run sleeps (the timer must still fire, once, after they are back,
// even though its due time passed while nobody ran); the planner dies between recording the wait and
// publishing its timer task (planner.after-wait: the task must be published again); and the gateway holding
// an approval's timeout dies before it is due (approval timeouts ride on the same timers).
import { describe, expect, it } from 'vitest';
import { STREAMS, type RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import {
  expectKilledAt,
  keyOf,
  logOf,
  watchToEnd,
  type CrashSystem,
  type PlanRequest,
  untilLogged,
} from './crash-harness';
import { eventsOf, useScratchSystem } from './tool-scratch';
import { eventually, sleep } from './system';
import { sleepThenCharge, timerRows } from './timers-support';

const SLEEP_SECONDS = 3;
// Counted from when the call is recorded; 3 s leaves room to kill the gateway before it is due on a busy machine.
const APPROVAL_TIMEOUT_SECONDS = 3;

let agentsPath = '';
const { scratch, crash } = useScratchSystem((name): Record<string, string> =>
  name === 'planner' && agentsPath ? { DURA_AGENTS: agentsPath } : {},
);

const isTimerWait = (e: RunEvent) => e.type === 'wait_requested' && e.data.kind === 'timer';

/**
 * What every timer case must show once the run is over: it completed; `timer_fired` is in the log once and
 * the `timers` table holds one fired row; the sleep's result says it woke at or after its due time; the
 * charge after it happened once; each scripted decision was asked once.
 */
async function expectSleptOnce(sys: CrashSystem, request: PlanRequest): Promise<void> {
  const { runId } = request;
  const watched = await watchToEnd(sys, runId);
  const types = watched.map((e) => e.type);
  expect(types.at(-1), `the run completes; its log: ${types.join(', ')}`).toBe('run_completed');
  const log = await logOf(sys, runId);

  const [wait, ...moreWaits] = eventsOf(log, 'wait_requested');
  expect(moreWaits, 'one wait').toEqual([]);
  expect(wait?.data.kind).toBe('timer');
  const until = wait?.data.until as string;
  const fired = eventsOf(log, 'timer_fired');
  expect(
    fired.map((e) => e.data.waitId),
    'timer_fired once',
  ).toEqual([wait?.data.waitId]);

  const rows = await timerRows(sys, runId);
  expect(rows, 'one row in the timers table').toHaveLength(1);
  expect(rows[0]?.wait_id).toBe(wait?.data.waitId);
  expect(rows[0]?.fired_at, 'the row is marked fired').toBeInstanceOf(Date);
  // Due by the broker's clock: the sleep's length after the broker stored its intent (`until` is the
  // recording planner's reading of that time).
  const intent = eventsOf(log, 'tool_call_requested').find((e) => e.data.tool === 'dura.sleep');
  const intentStored = await sys.system.jsm.streams.getMessage(STREAMS.runs, { seq: intent?.seq ?? 0 });
  expect(rows[0]?.due_at.getTime(), 'due the sleep after the broker stored its intent').toBe(
    Date.parse(intentStored?.timestamp ?? '') + SLEEP_SECONDS * 1000,
  );

  const state = fold(log);
  const sleepCall = state.calls.find((c) => c.tool === 'dura.sleep');
  expect(sleepCall?.status).toBe('completed');
  const firedAt = (sleepCall?.result as { firedAt?: string } | undefined)?.firedAt;
  expect(firedAt, 'the sleep call result names when it woke').toBeTypeOf('string');
  expect(Date.parse(firedAt as string), `woke at ${firedAt}, due ${until}`).toBeGreaterThanOrEqual(
    Date.parse(until),
  );

  const key = keyOf(request, 2);
  expect(sys.witness.effects(key), 'the charge after the sleep happened once').toBe(1);
  expect(sys.witness.requests(key)).toBe(1);
  expect(sys.witness.keys().filter((k) => k.startsWith(`${runId}:`))).toEqual([key]);

  const asked = (await sys.modelCalls(runId)).map((call) => call.decisions);
  expect(asked, 'each decision asked once: sleep, charge, complete').toEqual([0, 1, 2]);
}

describe('durable timers', () => {
  it('planner and gateway SIGKILLed while the run sleeps, restarted after the due time: the timer fires once', async () => {
    const sys = crash();
    const request = sleepThenCharge('timers-both-killed', SLEEP_SECONDS, 500);
    await sys.restart('planner');
    await sys.restart('tool-gateway');
    await sys.submit(request);

    const log = await untilLogged(sys, request.runId, isTimerWait, 'a timer wait');
    // The gateway holds the timer (its row is stored): from here on only Postgres remembers it.
    await eventually(
      async () => ((await timerRows(sys, request.runId)).length === 1 ? true : undefined),
      'the timer in the timers table',
    );
    await Promise.all([sys.proc('planner').kill('SIGKILL'), sys.proc('tool-gateway').kill('SIGKILL')]);
    const wait = log.find(isTimerWait) as Extract<RunEvent, { type: 'wait_requested' }>;
    const until = Date.parse(wait.data.until as string);
    const intent = eventsOf(log, 'tool_call_requested').find((e) => e.data.tool === 'dura.sleep');
    expect(until - Date.parse(intent?.meta.ts ?? ''), 'due 3 s after the call was recorded').toBe(
      SLEEP_SECONDS * 1000,
    );
    expect(Date.now(), 'both killed before the timer was due').toBeLessThan(until);

    // Nobody runs until the timer is overdue: it has not fired.
    await sleep(until - Date.now() + 1_000);
    expect(eventsOf(await logOf(sys, request.runId), 'timer_fired')).toEqual([]);
    expect((await timerRows(sys, request.runId)).map((row) => row.fired_at)).toEqual([null]);

    await Promise.all([sys.restart('planner'), sys.restart('tool-gateway')]);
    await expectSleptOnce(sys, request);
  });

  it('planner SIGKILLed after the wait is recorded, before its timer task is published: re-published, fires once', async () => {
    const sys = crash();
    const request = sleepThenCharge('timers-after-wait', SLEEP_SECONDS, 500);
    await sys.restart('tool-gateway');
    await sys.restart('planner', 'planner.after-wait:1');
    await sys.submit(request);
    await expectKilledAt(sys, 'planner', 'planner.after-wait:1');

    const log = await logOf(sys, request.runId);
    expect(log.filter(isTimerWait), 'the wait is recorded').toHaveLength(1);
    // The gateway is up and stores every timer task it gets: no row means no task was published.
    await sleep(1_500);
    expect(await timerRows(sys, request.runId), 'no timer task reached the gateway').toEqual([]);

    await sys.restart('planner');
    await expectSleptOnce(sys, request);
  });

  it('approval with a 3 s timeout, nobody answers, gateway SIGKILLed before it is due: rejected, never charged', async () => {
    const sys = crash();
    agentsPath = await scratch().writeJson('timer-agents', {
      agents: [
        {
          name: 'careful-payer',
          version: '1',
          systemPrompt: 'Charge only what a human approved.',
          model: { provider: 'scripted', steps: [{ tool: 'pay.charge', args: { amount: 900 } }] },
          tools: ['pay.charge'],
          approvals: {
            tools: ['pay.charge'],
            timeoutSeconds: APPROVAL_TIMEOUT_SECONDS,
            onTimeout: 'reject',
          },
        },
      ],
    });
    const runId = 'timers-approval-timeout';
    await sys.restart('planner');
    await sys.restart('tool-gateway');
    await sys.submit({ runId, agent: { kind: 'agent', name: 'careful-payer' } });

    const isApproval = (e: RunEvent) => e.type === 'wait_requested' && e.data.kind === 'approval';
    const log = await untilLogged(sys, runId, isApproval, 'an approval wait');
    const wait = log.find(isApproval) as Extract<RunEvent, { type: 'wait_requested' }>;
    expect(wait.data.onTimeout).toBe('reject');
    const timeoutAt = Date.parse(wait.data.timeoutAt as string);
    // The timeout is a durable timer: once the gateway holds it, kill the gateway before it is due.
    await eventually(
      async () => ((await timerRows(sys, runId)).length === 1 ? true : undefined),
      'the approval timeout in the timers table',
    );
    await sys.proc('tool-gateway').kill('SIGKILL');
    expect(Date.now(), 'killed before the timeout was due').toBeLessThan(timeoutAt);

    await sleep(Math.max(0, timeoutAt - Date.now()) + 1_000);
    expect(eventsOf(await logOf(sys, runId), 'timer_fired'), 'nobody fires it while no gateway runs').toEqual(
      [],
    );
    await sys.restart('tool-gateway');

    const watched = await watchToEnd(sys, runId);
    const types = watched.map((e) => e.type);
    expect(types.at(-1), `the run ends; its log: ${types.join(', ')}`).toBe('run_failed');
    const final = await logOf(sys, runId);
    expect(eventsOf(final, 'timer_fired').map((e) => e.data.waitId)).toEqual([wait.data.waitId]);
    const rows = await timerRows(sys, runId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.fired_at).toBeInstanceOf(Date);

    const state = fold(final);
    const charge = state.calls.find((c) => c.tool === 'pay.charge');
    expect(charge?.status).toBe('failed');
    expect(charge?.error?.code).toBe('rejected');
    expect(charge?.approval?.decision).toBe('rejected');
    expect(eventsOf(final, 'signal_received'), 'nobody answered').toEqual([]);

    // Never dispatched: no effect row, and the witness never saw a key of this run.
    const effects = await sys.system
      .sql`select 1 from effects where idempotency_key = ${charge?.idempotencyKey ?? ''}`;
    expect(effects).toHaveLength(0);
    await sleep(500);
    expect(sys.witness.keys().filter((k) => k.startsWith(`${runId}:`))).toEqual([]);
  });
});
