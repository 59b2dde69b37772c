// Issue acceptance (resource guards): a tool limited to 2 calls at once never runs more than 2 at once
// across three gateway replicas (measured by the payment witness), while 36 calls of it queue; throttled
// calls complete later, each exactly once, also after a gateway holding a slot is killed with SIGKILL.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ManagedProcess } from '@dura/testing';
import { logOf, useCrashSystem, watchToEnd, WITNESS_TOOLS, type PlanRequest } from './crash-harness';
import { LIMITED_CALL_MARKER } from './fixtures/limited-tools';
import { eventually } from './system';

const LIMITED_TOOLS = fileURLToPath(new URL('./fixtures/limited-tools.ts', import.meta.url));
const RUNS = 12;
const STEPS = 3;

const crash = useCrashSystem(['planner'], {
  env: () => ({
    DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${LIMITED_TOOLS}`,
    GATEWAY_SLOT_LEASE_MS: '2000',
    GATEWAY_THROTTLE_WAIT_MS: '3000',
  }),
});

function limitedPlan(runId: string, index: number): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: Array.from({ length: STEPS }, (_, step) => ({
        tool: 'pay.limited',
        args: { amount: index * 10 + step + 1, delayMs: 300 },
      })),
    },
  };
}

describe('a tool limited to 2 calls at once, behind three gateway replicas', () => {
  it('never runs more than 2 at once, and every throttled call completes exactly once, across a SIGKILL', async () => {
    const sys = crash();
    const gateways: ManagedProcess[] = [];
    for (let i = 0; i < 3; i += 1) gateways.push(await sys.startExtra('tool-gateway'));
    const requests = Array.from({ length: RUNS }, (_, i) => limitedPlan(`limited-${i}`, i));
    await Promise.all(requests.map((request) => sys.submit(request)));

    // A gateway running a call holds one of the two slots: kill it without warning, mid-call.
    const victim = await eventually(
      () => Promise.resolve(gateways.find((g) => g.output().includes(LIMITED_CALL_MARKER))),
      'a gateway to start a limited call',
    );
    const startedKey = /pay\.limited started (\S+)/.exec(victim.output())![1]!;
    const [held] = await sys.system.sql<{ slot: number; holder: string }[]>`
      select slot, holder from tool_slots where tool = 'pay.limited' and holder like ${'%/' + startedKey}`;
    await victim.kill('SIGKILL');

    // The killed gateway's slot comes back: another holder takes it once its lease ran out.
    expect(held, `the slot row held for ${startedKey}`).toBeDefined();
    await eventually(async () => {
      const [row] = await sys.system.sql<{ holder: string | null }[]>`
        select holder from tool_slots where tool = 'pay.limited' and slot = ${held!.slot}`;
      return row && row.holder !== held!.holder && row.holder !== null ? true : undefined;
    }, `slot ${held!.slot} to be taken by another gateway after its holder was killed`);

    for (const request of requests) {
      const watched = await watchToEnd(sys, request.runId, 90_000);
      expect(watched.at(-1)?.type, watched.map((e) => e.type).join(', ')).toBe('run_completed');
    }
    const keys: string[] = [];
    for (const request of requests) {
      const log = await logOf(sys, request.runId);
      const requested = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data.idempotencyKey] : []));
      const completed = log.flatMap((e) => (e.type === 'tool_call_completed' ? [e.data.idempotencyKey] : []));
      expect(completed.sort()).toEqual(requested.sort());
      keys.push(...requested);
    }
    expect(keys).toHaveLength(RUNS * STEPS);
    for (const key of keys) expect(sys.witness.effects(key), `charges for ${key}`).toBe(1);
    expect(sys.witness.totals().effects).toBe(RUNS * STEPS);
    // The limit held across replicas, and was used: calls did run side by side.
    expect(sys.witness.maxConcurrent()).toBe(2);
    // Every slot is free again.
    const busy = await sys.system.sql`
      select slot from tool_slots where tool = 'pay.limited' and holder is not null and lease_until > now()`;
    expect(busy).toHaveLength(0);
    for (const gateway of gateways) await gateway.kill('SIGTERM');
  }, 180_000);
});
