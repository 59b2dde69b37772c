// Flow control at scale (issue acceptance for model limits): a fake provider that answers 429 above 60
// requests/min and above an input-token limit; three planners admit 1,000 runs of tenant a and 50 runs each
// of tenants b and c, with the limits declared at the provider's values, while a planner is SIGKILLed every
// few seconds and another takes its place. The provider sees at most 1% of calls over its limits, every run
// completes with its decision asked once, and b and c finish within 1.5 times what their fair share predicts.
//   FLOW_SOAK_SCALE=0.2 npx vitest run flow-fairness.soak --testTimeout=3600000   (a fifth of the runs)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManagedProcess } from '@dura/testing';
import { useCrashSystem, watchToEnd, WITNESS_TOOLS } from './crash-harness';
import { startLimitedProvider, writeWriterAgent, type LimitedProvider } from './limited-provider';

const SCALE = Number(process.env['FLOW_SOAK_SCALE'] ?? '1');
const RUNS = { a: Math.round(1_000 * SCALE), b: Math.round(50 * SCALE), c: Math.round(50 * SCALE) };
const RPM = 60;
/** Input tokens per call as the provider counts them, and its limit: 80 calls' worth a minute. */
const INPUT_TOKENS = 25;
const INPUT_TPM = 80 * INPUT_TOKENS;
const KILL_EVERY_MS = 5_000;
const MODEL = 'openai/fake-1';

let provider: LimitedProvider;
let dir = '';
let agentsPath = '';

beforeAll(async () => {
  provider = await startLimitedProvider({
    requestsPerMinute: RPM,
    burstSeconds: 60,
    inputTokensPerMinute: INPUT_TPM,
    inputTokens: INPUT_TOKENS,
  });
  dir = await mkdtemp(join(tmpdir(), 'dura-fair-'));
  agentsPath = await writeWriterAgent(dir, provider, 20);
});

afterAll(async () => {
  await provider?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const crash = useCrashSystem(['tool-gateway', 'projector'], {
  env: (name) => ({
    DURA_TOOLS_MODULES: WITNESS_TOOLS,
    ...(name === 'planner'
      ? {
          DURA_AGENTS: agentsPath,
          PLANNER_TENANT_AGENTS: '*=*',
          DURA_MODEL_LIMITS: JSON.stringify([
            { model: MODEL, requestsPerMinute: RPM, inputTokensPerMinute: INPUT_TPM },
          ]),
          DURA_MODEL_CALL_LEASE_MS: '3000',
        }
      : {}),
  }),
});

describe('flow control at scale, three planners killed in turn', () => {
  it('keeps the provider under its limits, completes every run, and gives tenants b and c their share', async () => {
    const sys = crash();
    const planners: ManagedProcess[] = [];
    for (let i = 0; i < 3; i += 1) planners.push(await sys.startExtra('planner'));
    let stopKilling = false;
    let kills = 0;
    const killer = (async () => {
      for (let turn = 0; !stopKilling; turn += 1) {
        await new Promise((resolve) => setTimeout(resolve, KILL_EVERY_MS));
        if (stopKilling) break;
        const victim = planners.splice(turn % planners.length, 1)[0];
        await victim?.kill('SIGKILL');
        kills += 1;
        planners.push(await sys.startExtra('planner'));
      }
    })();

    const ids = (tenant: string, count: number) =>
      Array.from({ length: count }, (_, i) => `fair-${tenant}-${i}`);
    const submit = (tenant: string, runIds: string[]) =>
      Promise.all(
        runIds.map((runId) =>
          sys.submit({ runId, tenant, agent: { kind: 'agent', name: 'writer' }, input: runId }),
        ),
      );
    // Tenant a's backlog first; b and c ask once a is well in line.
    const a = ids('a', RUNS.a);
    for (let i = 0; i < a.length; i += 100) await submit('a', a.slice(i, i + 100));
    const lateStart = Date.now();
    const b = ids('b', RUNS.b);
    const c = ids('c', RUNS.c);
    await Promise.all([submit('b', b), submit('c', c)]);

    const ends = new Map<string, number>();
    const deadline = (RUNS.a + RUNS.b + RUNS.c) * (60_000 / RPM) * 2 + 300_000;
    for (const runId of [...b, ...c, ...a]) {
      const events = await watchToEnd(sys, runId, deadline);
      const last = events.at(-1);
      expect(last?.type, `${runId}: ${events.map((e) => e.type).join(', ')}`).toBe('run_completed');
      ends.set(runId, Date.parse(last?.meta.ts ?? ''));
      expect(
        events.filter((e) => e.type === 'thought'),
        `${runId} decided once`,
      ).toHaveLength(1);
    }
    stopKilling = true;
    await killer;

    const calls = provider.server.requests.length;
    const finish = (runIds: string[]) =>
      Math.max(...runIds.map((id) => ends.get(id) ?? Infinity)) - lateStart;
    // Each of b and c has a third of the limit's sustained rate (the smaller of the two limits) while a, b and
    // c all wait: b's calls take 3 × its runs' worth of the rate.
    const perMinute = Math.min(RPM, INPUT_TPM / INPUT_TOKENS);
    const predictedMs = (RUNS.b * 3 * 60_000) / perMinute;
    const report = {
      runs: RUNS,
      kills,
      calls,
      refused: provider.refusals.length,
      predictedMs,
      bMs: finish(b),
      cMs: finish(c),
      aMs: finish(a),
    };
    console.log(`flow fairness: ${JSON.stringify(report)}`);
    expect(
      provider.refusals.length,
      `${provider.refusals.length} of ${calls} calls refused: ${provider.refusals.slice(0, 20).join(', ')}`,
    ).toBeLessThanOrEqual(Math.floor(calls / 100));
    expect(report.bMs).toBeLessThanOrEqual(1.5 * predictedMs);
    expect(report.cMs).toBeLessThanOrEqual(1.5 * predictedMs);
    expect(kills).toBeGreaterThan(0);
    for (const planner of planners) await planner.kill('SIGTERM');
    // 1,100 calls at 60 a minute take about 19 minutes.
  }, 3_600_000);
});
