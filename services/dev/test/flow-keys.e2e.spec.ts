// Concurrency keys at scale (issue acceptance for flow control): 200 runs over 20 keys of limit 1, each run
// two steps that hold its key at a witness, driven by three planners. Never two runs of a key in a step at
// once, as the witness counts them, and every run completes.
//   npx vitest run flow-keys.e2e
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { ManagedProcess } from '@dura/testing';
import { logOf, useCrashSystem, watchToEnd, WITNESS_TOOLS, type PlanRequest } from './crash-harness';
import { startKeyWitness, type KeyWitness } from './key-witness';

const KEY_TOOLS = fileURLToPath(new URL('./fixtures/key-witness-tools.ts', import.meta.url));
const KEYS = 20;
const RUNS = 200;

let witness: KeyWitness;

beforeAll(async () => {
  witness = await startKeyWitness();
});

afterAll(async () => {
  await witness?.close();
});

const crash = useCrashSystem(['tool-gateway', 'projector'], {
  env: () => ({ DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${KEY_TOOLS}`, KEY_WITNESS_URL: witness.url }),
});

function keyed(runId: string, key: string): PlanRequest {
  const step = { tool: 'key.hold', args: { key, ms: 100 } };
  return { runId, agent: { kind: 'scripted', steps: [step, step] }, concurrency: { key, limit: 1 } };
}

describe('concurrency keys at scale, three planners', () => {
  it('never lets two runs of a key take a step at once, and completes all 200', async () => {
    const sys = crash();
    const planners: ManagedProcess[] = [];
    for (let i = 0; i < 3; i += 1) planners.push(await sys.startExtra('planner'));
    const requests = Array.from({ length: RUNS }, (_, i) => keyed(`keys-${i}`, `tenant-key:${i % KEYS}`));
    await Promise.all(requests.map((request) => sys.submit(request)));

    for (const { runId } of requests) {
      const events = await watchToEnd(sys, runId, 900_000);
      expect(events.at(-1)?.type, `${runId}: ${events.map((e) => e.type).join(', ')}`).toBe('run_completed');
    }
    for (let k = 0; k < KEYS; k += 1) {
      const key = `tenant-key:${k}`;
      expect(witness.maxInside(key), key).toBe(1);
      // Two steps for each of the key's runs, each entered once.
      expect(witness.entered(key).size, key).toBe((2 * RUNS) / KEYS);
    }
    // Runs over their key's limit waited for it, as suspended runs that say so.
    const waited = await Promise.all(requests.slice(-KEYS).map(({ runId }) => logOf(sys, runId)));
    const reasons = waited.flat().flatMap((e) => (e.type === 'wait_requested' ? [e.data.reason] : []));
    expect(reasons.some((reason) => reason?.startsWith('capacity of concurrency key tenant-key:'))).toBe(
      true,
    );
    for (const planner of planners) await planner.kill('SIGTERM');
  });
});
