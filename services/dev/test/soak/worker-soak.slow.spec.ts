// The worker soak of the test suite: two workers and a projector run code agents with parallel groups of
// 3–5 charges, a child run and a signal wait, first with no fault at all, then with a worker SIGKILLed every
// 1–3 s. Every run must end on its own (each gets its one signal, nothing else), completed, with the output its
// code computes, each charge once per key at the witness, nothing dead-lettered. The calm round alone used to
// leave about one run in three standing after a parallel group (04509e3: 16 of 40).
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from './cluster';
import { runWorkerRound } from './worker-soak';

const AGENTS = fileURLToPath(new URL('../fixtures/worker-soak-agents.ts', import.meta.url));
const progress = process.env['DURA_TEST_VERBOSE'] === '1' ? (line: string) => console.error(line) : undefined;

describe('two workers', () => {
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster({ planners: 0, gateways: 0, workers: 2, env: { DURA_AGENTS: AGENTS } });
  }, 180_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('drive every run to its end with no fault and no nudge: parallel groups, a child run, a signal', async () => {
    const report = await runWorkerRound(cluster!, {
      name: 'calm',
      runs: 12,
      delayMs: 50,
      submitOverMs: 4_000,
      maxMs: 120_000,
      ...(progress ? { progress } : {}),
    });
    expect(report.ok, report.explanation).toBe(true);
  }, 240_000);

  it('drive every run to its end while a worker is SIGKILLed every 1–3 s', async () => {
    const report = await runWorkerRound(cluster!, {
      name: 'killed',
      runs: 8,
      delayMs: 200,
      submitOverMs: 10_000,
      killEveryMs: [1_000, 3_000],
      killForMs: 60_000,
      maxMs: 150_000,
      ...(progress ? { progress } : {}),
    });
    expect(report.kills).toBeGreaterThan(0);
    expect(report.ok, report.explanation).toBe(true);
  }, 300_000);
});
