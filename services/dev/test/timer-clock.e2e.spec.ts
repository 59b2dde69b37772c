// A sleep is due by the broker's clock, not by the clock of the planner that recorded it. The planner runs on
// a wall clock stepped 5 min ahead, then 5 min behind (libfaketime; its monotonic time is left alone), the
// gateway on the host's: the timer of a 2 s `dura.sleep` must fire 2 s after the broker stored the sleep's
// intent (not 5 min late, not at once), and the gateway's `timers` row must say so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS, type RunEvent } from '@dura/contracts';
import { createClockControl, type ClockControl } from '@dura/testing';
import { logOf, useCrashSystem, watchToEnd, type CrashSystem } from './crash-harness';
import { eventsOf } from './tool-scratch';
import { sleepThenCharge, timerRows } from './timers-support';

const SLEEP_SECONDS = 2;
const SKEW_SECONDS = 300;
/** A stored time is rounded to the millisecond, and the broker stamps on arrival. */
const EARLY_SLACK_MS = 50;
/** From due to recorded: the gateway polls its due timers and the relay publishes (a busy 2-core machine). */
const LATE_SLACK_MS = 5_000;

const crash = useCrashSystem([]);
let clock: ClockControl;

beforeAll(async () => {
  clock = await createClockControl();
});
afterAll(async () => {
  await clock?.close();
});

/** The broker's timestamp of the run-log message at `seq` (milliseconds). */
async function storedAt(sys: CrashSystem, seq: number): Promise<number> {
  const msg = await sys.system.jsm.streams.getMessage(STREAMS.runs, { seq });
  if (!msg) throw new Error(`no message at ${seq}`);
  return Date.parse(msg.timestamp);
}

async function expectDueByTheBroker(sys: CrashSystem, runId: string): Promise<void> {
  const watched = await watchToEnd(sys, runId, 90_000);
  const types = watched.map((e) => e.type);
  expect(types.at(-1), `the run completes; its log: ${types.join(', ')}`).toBe('run_completed');
  const log = await logOf(sys, runId);
  const intent = eventsOf(log, 'tool_call_requested').find((e) => e.data.tool === 'dura.sleep') as RunEvent;
  const [wait] = eventsOf(log, 'wait_requested');
  const fired = eventsOf(log, 'timer_fired');
  expect(
    fired.map((e) => e.data.waitId),
    'timer_fired once',
  ).toEqual([wait?.data.waitId]);
  expect(wait?.data.delayMs, 'the wait records its length').toBe(SLEEP_SECONDS * 1000);

  const askedAt = await storedAt(sys, intent.seq);
  const firedAt = await storedAt(sys, (fired[0] as RunEvent).seq);
  const after = firedAt - askedAt;
  expect(after, `fired ${after} ms after the broker stored the intent`).toBeGreaterThanOrEqual(
    SLEEP_SECONDS * 1000 - EARLY_SLACK_MS,
  );
  expect(after, `fired ${after} ms after the broker stored the intent`).toBeLessThan(
    SLEEP_SECONDS * 1000 + LATE_SLACK_MS,
  );
  const rows = await timerRows(sys, runId);
  expect(
    rows.map((row) => row.due_at.getTime()),
    'due by the broker, not the planner',
  ).toEqual([askedAt + SLEEP_SECONDS * 1000]);
}

describe('a sleep recorded by a planner whose clock is off', () => {
  it('5 min ahead: the timer fires 2 s after the broker stored the intent, not 5 min late', async () => {
    const sys = crash();
    await clock.set(SKEW_SECONDS);
    await sys.restart('tool-gateway');
    await sys.restart('planner', undefined, clock.env);
    const request = sleepThenCharge('timer-clock-ahead', SLEEP_SECONDS, 200);
    await sys.submit(request);
    await expectDueByTheBroker(sys, request.runId);
  });

  it('5 min behind: the timer fires 2 s after the broker stored the intent, not at once', async () => {
    const sys = crash();
    await clock.set(-SKEW_SECONDS);
    await sys.restart('planner', undefined, clock.env);
    const request = sleepThenCharge('timer-clock-behind', SLEEP_SECONDS, 200);
    await sys.submit(request);
    await expectDueByTheBroker(sys, request.runId);
  });
});
