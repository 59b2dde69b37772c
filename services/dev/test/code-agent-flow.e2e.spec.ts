// A code agent's ctx.model calls under model limits (docs/flow-control.md), against fake OpenAI-compatible
// providers that answer 429 over their limits: one declared at 60 requests a minute, one with one concurrent
// call whose answers take 3 s. A worker is SIGKILLed between a call's admission and the call; then a worker and
// a planner serve side by side. No call is refused, never are two in flight, the runs not admitted wait for
// capacity as suspended runs (a recorded timer wait naming the limit), the dead holder's slot comes back
// when its lease runs out, and every decision is recorded once.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { startLimitedProvider, type LimitedProvider } from './limited-provider';
import { expectKilledAt, useCrashSystem, watchToEnd, type CrashSystem } from './crash-harness';

const AGENTS = fileURLToPath(new URL('./fixtures/code-flow-agents.ts', import.meta.url));
const RATE_MODEL = 'openai/fake-rate';
const SLOT_MODEL = 'openai/fake-slot';
/** The rate provider's limit: 60 a minute, a bucket of 6 seconds' worth, refilled one a second. */
const RPM = 60;
const BURST_SECONDS = 6;
const RATED = Array.from({ length: 10 }, (_, i) => `code-rated-${i}`);
const SLOTTED = ['code-slotted-a', 'code-slotted-b'];

let rate: LimitedProvider;
let slot: LimitedProvider;

beforeAll(async () => {
  rate = await startLimitedProvider({ requestsPerMinute: RPM, burstSeconds: BURST_SECONDS, latencyMs: 100 });
  // Rates it never reaches; each answer takes 3 s, so a second call admitted meanwhile would be seen in flight.
  slot = await startLimitedProvider({ requestsPerMinute: 6_000, burstSeconds: 60, latencyMs: 3_000 });
});

afterAll(async () => {
  await rate?.close();
  await slot?.close();
});

const crash = useCrashSystem([], {
  env: (name): Record<string, string> =>
    name === 'planner' || name === 'worker'
      ? {
          DURA_AGENTS: AGENTS,
          FLOW_RATE_URL: rate.server.url,
          FLOW_SLOT_URL: slot.server.url,
          DURA_MODEL_LIMITS: JSON.stringify([
            { model: RATE_MODEL, requestsPerMinute: RPM, burstSeconds: BURST_SECONDS },
            { model: SLOT_MODEL, concurrentCalls: 1 },
          ]),
          // A holder killed between admission and call gives its slot back within seconds.
          DURA_MODEL_CALL_LEASE_MS: '6000',
        }
      : {},
});

const waitsOf = (log: RunEvent[]) => log.flatMap((e) => (e.type === 'wait_requested' ? [e.data] : []));
const thoughtsOf = (log: RunEvent[]) => log.filter((e) => e.type === 'thought');

describe("a code agent's ctx.model under model limits", () => {
  it('in a worker SIGKILLed between admission and call and a planner beside it: never a 429, never two calls in flight, runs not admitted wait for capacity holding nothing, no recorded decision asked again', async () => {
    const sys = crash();
    // Two runs under one concurrent call; the worker dies between the first admission and its call.
    await sys.restart('worker', 'planner.after-admit');
    await Promise.all(SLOTTED.map((runId) => submit(sys, runId, 'code-slotted')));
    await expectKilledAt(sys, 'worker', 'planner.after-admit');
    expect(slot.server.requests, 'the killed call never reached the provider').toHaveLength(0);

    // A worker takes its place, and a planner (its own service; the worker's gateway fires the timers)
    // serves beside it: ten runs under the rate, shared by both through the flow-control bucket.
    const [, planner] = await Promise.all([sys.restart('worker'), sys.startExtra('planner')]);
    try {
      await Promise.all(RATED.map((runId) => submit(sys, runId, 'code-rated')));
      const logs = new Map<string, RunEvent[]>();
      for (const runId of [...SLOTTED, ...RATED]) {
        const log = await watchToEnd(sys, runId, 90_000);
        expect(log.at(-1)?.type, `${runId}: ${log.map((e) => e.type).join(', ')}`).toBe('run_completed');
        logs.set(runId, log);
      }
      // Every decision recorded once, whatever waited.
      for (const log of logs.values()) expect(thoughtsOf(log)).toHaveLength(1);

      // The rate: no call refused; the runs not admitted at once waited their turn, as suspended runs.
      expect(rate.refusals, 'calls the provider refused with 429').toEqual([]);
      expect(rate.answered).toHaveLength(RATED.length);
      const rated = RATED.flatMap((runId) => waitsOf(logs.get(runId) ?? []));
      // The bucket holds 6, 2 seconds of it kept as headroom: most of the ten waited their turn.
      expect(rated.length).toBeGreaterThanOrEqual(3);
      for (const wait of rated)
        expect(wait).toMatchObject({
          kind: 'timer',
          reason: `capacity of ${RATE_MODEL} (requests per minute)`,
        });

      // The slot: never two calls in flight; the dead holder's slot came back when its lease ran out.
      expect(slot.maxInFlight()).toBe(1);
      expect(slot.refusals).toEqual([]);
      const slotted = SLOTTED.flatMap((runId) => waitsOf(logs.get(runId) ?? []));
      expect(slotted.map((wait) => wait.reason)).toContain(`capacity of ${SLOT_MODEL} (concurrent calls)`);
      for (const wait of slotted)
        expect(wait).toMatchObject({ kind: 'timer', reason: `capacity of ${SLOT_MODEL} (concurrent calls)` });
    } finally {
      await Promise.all([planner.kill('SIGTERM'), sys.proc('worker').kill('SIGTERM')]);
    }
  }, 180_000);
});

function submit(sys: CrashSystem, runId: string, agent: string): Promise<void> {
  return sys.submit({ runId, agent: { kind: 'agent', name: agent }, input: `topic ${runId}` });
}
