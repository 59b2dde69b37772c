// Graceful drain: a tool gateway receives SIGTERM in the middle of a slow call while a second replica runs.
// Either the call finishes before the drain deadline (and is acked, or answered), or it is handed back and the
// other replica redoes it under the same idempotency key; either way the payment witness sees one charge, and
// the process exits 0 within SHUTDOWN_GRACE_MS. Both ways a call reaches a gateway: a planner's direct call,
// and a tool task (PLANNER_DIRECT_CALLS=false).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ManagedProcess, ProcessExit } from '@dura/testing';
import {
  keyOf,
  logOf,
  useCrashSystem,
  watchToEnd,
  WITNESS_TOOLS,
  type CrashSystem,
  type PlanRequest,
} from './crash-harness';
import { SLOW_CALL_MARKER } from './fixtures/drain-tools';
import { eventually } from './system';

const DRAIN_TOOLS = fileURLToPath(new URL('./fixtures/drain-tools.ts', import.meta.url));

const crash = useCrashSystem(['planner', 'projector'], {
  env: () => ({ DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${DRAIN_TOOLS}` }),
});

/** A slow charge, then a quick one: the run goes on after the drained gateway is gone. */
function slowPlan(runId: string, delayMs: number): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'pay.slow', args: { amount: 100, delayMs } },
        { tool: 'pay.charge', args: { amount: 200 } },
      ],
    },
  };
}

/** Two gateway replicas; the test stops both (whatever it asserted) before the next one starts its own. */
async function withTwoGateways(
  sys: CrashSystem,
  graceMs: number,
  test: (gateways: ManagedProcess[]) => Promise<void>,
): Promise<void> {
  const env = { SHUTDOWN_GRACE_MS: String(graceMs) };
  const gateways = await Promise.all([
    sys.startExtra('tool-gateway', env),
    sys.startExtra('tool-gateway', env),
  ]);
  try {
    await test(gateways);
  } finally {
    await Promise.allSettled(gateways.map((gateway) => gateway.kill('SIGTERM')));
  }
}

/** The replica whose tool printed that it started the call with `key`. */
function takerOf(gateways: ManagedProcess[], key: string): Promise<ManagedProcess> {
  return eventually(
    () => Promise.resolve(gateways.find((g) => g.output().includes(`${SLOW_CALL_MARKER} ${key}`))),
    `a gateway to start the slow call ${key}`,
  );
}

/** Sends SIGTERM (no escalation) and returns how the process ended and how long that took. */
async function terminate(proc: ManagedProcess, limitMs: number): Promise<ProcessExit & { ms: number }> {
  const sent = Date.now();
  process.kill(proc.pid, 'SIGTERM');
  const exit = await Promise.race([
    proc.exited,
    new Promise<never>((_, reject) =>
      setTimeout(
        () =>
          reject(
            new Error(`${proc.name} still runs ${limitMs} ms after SIGTERM:\n${proc.output().slice(-3000)}`),
          ),
        limitMs,
      ),
    ),
  ]);
  return { ...exit, ms: Date.now() - sent };
}

async function effectRow(sys: CrashSystem, key: string) {
  const [row] = await sys.system.sql<{ status: string; attempts: number }[]>`
    select status, attempts from effects where idempotency_key = ${key}`;
  return row;
}

async function expectCompletedWithOneEffectPerKey(sys: CrashSystem, request: PlanRequest): Promise<void> {
  const watched = await watchToEnd(sys, request.runId, 30_000);
  expect(watched.at(-1)?.type, watched.map((e) => e.type).join(', ')).toBe('run_completed');
  const log = await logOf(sys, request.runId);
  for (const step of [1, 2]) {
    const key = keyOf(request, step);
    expect(sys.witness.effects(key), `charges for ${key}`).toBe(1);
    const completed = log.filter((e) => e.type === 'tool_call_completed' && e.data.idempotencyKey === key);
    expect(completed, `observations of ${key}`).toHaveLength(1);
  }
}

const WAYS = [
  {
    way: 'a tool task',
    id: 'task',
    planner: { PLANNER_DIRECT_CALLS: 'false' },
    draining: 'draining: 1 in flight',
    handedBack: 'handed back 1 running messages',
  },
  {
    way: 'a direct call',
    id: 'direct',
    planner: { PLANNER_DIRECT_CALLS: 'true' },
    draining: 'direct calls draining: 1 running',
    handedBack: 'handed back 1 direct calls',
  },
];

describe.each(WAYS)('a tool gateway stopped with SIGTERM in the middle of a slow call ($way)', (way) => {
  it('finishes the call within the grace period, acks it, and exits 0; the other replica runs the rest', async () => {
    const sys = crash();
    await sys.restart('planner', undefined, way.planner);
    const graceMs = 10_000;
    const request = slowPlan(`drain-finishes-call-${way.id}`, 3_000);
    const key = keyOf(request, 1);
    await withTwoGateways(sys, graceMs, async (gateways) => {
      await sys.submit(request);
      const taker = await takerOf(gateways, key);

      const exit = await terminate(taker, graceMs + 2_000);

      expect(exit, taker.output().slice(-3000)).toMatchObject({ code: 0, signal: null });
      expect(exit.ms).toBeLessThan(graceMs);
      // It waited for the witness's answer rather than dropping the call.
      expect(exit.ms).toBeGreaterThan(1_500);
      const output = taker.output();
      expect(output).toContain(way.draining);
      expect(output).toMatch(/tool-gateway: drained in \d+ ms/);
      expect(output).not.toContain('handed back');
      expect(await effectRow(sys, key)).toEqual({ status: 'succeeded', attempts: 1 });

      await expectCompletedWithOneEffectPerKey(sys, request);
      expect(sys.witness.requests(key), 'the call was not run again').toBe(1);
    });
  });

  it('hands back a call that outlasts the grace period: exits 0 in time, and the other replica redoes it under the same key', async () => {
    const sys = crash();
    await sys.restart('planner', undefined, way.planner);
    // The margin after the in-flight deadline (a quarter of the grace) flushes the outbox and telemetry; on a
    // busy 2-core machine 500 ms of it was not always enough, so the grace is 4 s here.
    const graceMs = 4_000;
    const request = slowPlan(`drain-hands-back-call-${way.id}`, 6_000);
    const key = keyOf(request, 1);
    await withTwoGateways(sys, graceMs, async (gateways) => {
      await sys.submit(request);
      const taker = await takerOf(gateways, key);
      const stoppedAt = Date.now();

      const exit = await terminate(taker, graceMs + 3_000);

      // Exit 0: the drain ended on its own; the runner's hard stop at the grace period exits 1.
      expect(exit, taker.output().slice(-3000)).toMatchObject({ code: 0, signal: null });
      expect(exit.ms).toBeLessThan(graceMs + 1_000);
      const output = taker.output();
      expect(output).toContain(way.draining);
      expect(output).toContain(way.handedBack);
      expect(output).toContain('released the leases of handed-back idempotent calls');

      await expectCompletedWithOneEffectPerKey(sys, request);
      // The lease was released: without that the redo would wait out 21 s (timeout + lease margin).
      expect(Date.now() - stoppedAt).toBeLessThan(16_000);
      // Asked twice with one key, charged once.
      expect(sys.witness.requests(key)).toBe(2);
      expect(await effectRow(sys, key)).toEqual({ status: 'succeeded', attempts: 2 });
      const other = gateways.find((g) => g !== taker);
      expect(other?.output()).toContain(`${SLOW_CALL_MARKER} ${key}`);
    });
  });
});
