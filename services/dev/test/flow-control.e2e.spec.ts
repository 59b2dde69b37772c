// Flow control across planner replicas (docs/flow-control.md): a fake OpenAI-compatible provider refuses
// with 429 whatever goes over 120 requests/min (15 s burst) or 8 calls at once; three planners admit the runs of three
// tenants under that limit, declared at the fake's values, while one of them is SIGKILLed; runs that are not
// admitted wait as suspended runs that show what they wait for. A concurrency key of limit 1 keeps runs of
// the same key apart, as a witness sees.
//
// What a waiting run shows is read while the provider holds its answers back: its 8 slots stay taken, so a
// ninth run waits for one until the API and the CLI (a process that takes seconds to start on a loaded machine)
// have shown the wait. A wait for the rate ends by itself, often before a CLI started then could read it.
//
// A run woken because capacity came free ends its wait by its timer firing now (the gateway moves the timer):
// the wait ends once, so one drive goes on from it and the model is asked once per decision.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { repoRoot, type ManagedProcess } from '@dura/testing';
import { startKeyWitness, type KeyWitness } from './key-witness';
import { startLimitedProvider, writeWriterAgent, type LimitedProvider } from './limited-provider';
import { logOf, useCrashSystem, watchToEnd, WITNESS_TOOLS, type PlanRequest } from './crash-harness';
import { dura, eventually, getJson } from './system';

const KEY_TOOLS = fileURLToPath(new URL('./fixtures/key-witness-tools.ts', import.meta.url));
const RPM = 120;
/** The provider smooths its limit: a bucket holds 15 seconds' worth (30 requests), refilled 2 per second. */
const BURST_SECONDS = 15;
const CONCURRENT = 8;
const MODEL = 'openai/fake-1';
const REASON = `capacity of ${MODEL} (requests per minute)`;
const RUNS: Record<string, number> = { a: 32, b: 6, c: 6 };
/** Runs submitted while the provider holds its answers: one more than its slots. */
const HELD_RUNS = CONCURRENT + 1;
const KEYS = 4;
const RUNS_PER_KEY = 3;

/** The provider's side: a bucket refilled continuously, 429 with Retry-After above; calls at once measured. */
let provider: LimitedProvider;
let dir = '';
let agentsPath = '';

/** Per key, the steps inside at once (the tool tells it when one begins and ends). */
let keyWitness: KeyWitness;

beforeAll(async () => {
  provider = await startLimitedProvider({ requestsPerMinute: RPM, burstSeconds: BURST_SECONDS });
  keyWitness = await startKeyWitness();
  dir = await mkdtemp(join(tmpdir(), 'dura-flow-'));
  agentsPath = await writeWriterAgent(dir, provider, 50);
});

afterAll(async () => {
  await provider?.close();
  await keyWitness?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const crash = useCrashSystem(['tool-gateway', 'projector'], {
  env: (name) => ({
    DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${KEY_TOOLS}`,
    KEY_WITNESS_URL: keyWitness.url,
    ...(name === 'planner'
      ? {
          DURA_AGENTS: agentsPath,
          PLANNER_TENANT_AGENTS: '*=*',
          DURA_MODEL_LIMITS: JSON.stringify([
            {
              model: MODEL,
              requestsPerMinute: RPM,
              burstSeconds: BURST_SECONDS,
              concurrentCalls: CONCURRENT,
            },
          ]),
          // A planner killed mid-call gives its slot back within seconds. A call the provider holds keeps its
          // slot only while its planner renews the lease, every third of it: a planner loaded at its first
          // calls was seen to renew 4.6 s late, which a 3 s lease did not survive.
          DURA_MODEL_CALL_LEASE_MS: '15000',
          // And it keeps its message only while its planner tells JetStream it is still working on it, every
          // half of the ack wait. Planners on a loaded machine were seen to stop for 3 to 7 s at their first
          // runs: past the harness's 3 s, the message of a call the provider held went to another planner,
          // whose drive found the slots taken (by that very call among others) and recorded a wait, which
          // superseded the held call: its planner aborted it, and the runs asked again for the slots. 20 s
          // survives a stall of 10 s, as the lease does; the planner SIGKILLed below hands its messages
          // back after it.
          PLANNER_ACK_WAIT_MS: '20000',
        }
      : {}),
  }),
});

function keyedPlan(runId: string, key: string): PlanRequest {
  const step = { tool: 'key.hold', args: { key, ms: 200 } };
  return {
    runId,
    agent: { kind: 'scripted', steps: [step, step] },
    concurrency: { key, limit: 1 },
  };
}

describe('flow control across three planners', () => {
  it('keeps the provider under its limits through a SIGKILL, shows waits for capacity, and completes every run; a concurrency key of limit 1 keeps its runs apart', async () => {
    const sys = crash();
    const planners: ManagedProcess[] = [];
    for (let i = 0; i < 3; i += 1) planners.push(await sys.startExtra('planner'));

    const heldRuns = Array.from({ length: HELD_RUNS }, (_, i) => ({ runId: `flow-held-${i}`, tenant: 'a' }));
    const laterRuns = Object.entries(RUNS).flatMap(([tenant, count]) =>
      Array.from({ length: count }, (_, i) => ({ runId: `flow-${tenant}-${i}`, tenant })),
    );
    const modelRuns = [...heldRuns, ...laterRuns];
    const submitModelRun = ({ runId, tenant }: { runId: string; tenant: string }) =>
      sys.submit({ runId, tenant, agent: { kind: 'agent', name: 'writer' }, input: runId });
    const keyed = Array.from({ length: KEYS * RUNS_PER_KEY }, (_, i) =>
      keyedPlan(`keyed-${i}`, `customer:${i % KEYS}`),
    );
    // The request of docs/flow-control.md, as written.
    const doc = readFileSync(join(repoRoot(), 'docs/flow-control.md'), 'utf8');
    const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    const documented = (field: string) => {
      const block = blocks.find((text) => text.trimStart().startsWith('{') && text.includes(`"${field}"`));
      return JSON.parse(block ?? 'null') as Omit<PlanRequest, 'runId'>;
    };
    const docRun = { ...documented('concurrency'), runId: 'flow-doc' };
    expect(docRun.concurrency).toEqual({ key: 'customer:42', limit: 1 });
    const docPriority = { ...documented('priority'), runId: 'flow-doc-priority' };
    expect(docPriority).toMatchObject({ tenant: 'acme', priority: 10 });

    /** A run of `runs` that GET /runs/:id shows waiting for `reason`. */
    const waitingFor = async (runs: readonly { runId: string }[], reason: string) => {
      const states = await Promise.all(
        runs.map(async ({ runId }) => ({ runId, ...(await getJson(`${sys.system.apiUrl}/runs/${runId}`)) })),
      );
      return states.find(({ status, body }) => {
        const state = body as { status: string; waiting?: { reason?: string } };
        return status === 200 && state.status === 'waiting' && state.waiting?.reason === reason;
      })?.runId;
    };

    // Runs wait for capacity, suspended: the API and the CLI say what for. The provider holds its answers, so
    // its slots stay taken and a run left over waits for one until the CLI has shown it.
    provider.hold();
    await Promise.all(heldRuns.map(submitModelRun));
    const slotReason = `capacity of ${MODEL} (concurrent calls)`;
    const waitingForSlot = () => waitingFor(heldRuns, slotReason);
    /** What the provider holds, whose calls it was asked since the hold, and each held run as the API shows it. */
    const heldState = async () => {
      const states = await Promise.all(
        heldRuns.map(async ({ runId }) => {
          const { status, body } = await getJson(`${sys.system.apiUrl}/runs/${runId}`);
          const state = body as { status?: string; waiting?: { reason?: string } };
          if (status !== 200) return `${runId}: HTTP ${status}`;
          return `${runId}: ${state.status ?? '?'}${state.waiting?.reason ? ` for ${state.waiting.reason}` : ''}`;
        }),
      );
      const asked = provider.answered.map(({ text }) => text).join(', ');
      return `the provider holds ${provider.held()} calls (asked by ${asked || 'none'}); ${states.join('; ')}`;
    };
    await eventually(
      async () => {
        const runId = provider.held() === CONCURRENT ? await waitingForSlot() : undefined;
        // Thrown, not returned: a wait that times out names the last state seen.
        if (runId === undefined) throw new Error(await heldState());
        return runId;
      },
      `${CONCURRENT} calls held at the provider and a run waiting for a slot in GET /runs/:id`,
      60_000,
    );
    // A waiting run asks for a slot again every second or so (and a run whose call its planner gave up on
    // waits in its place): a read at such a moment sees it running, and the next one a run waiting.
    let printed = '';
    const shown = await eventually(
      async () => {
        const runId = await waitingForSlot();
        printed = runId === undefined ? '' : (await dura(sys, ['get', runId])).output;
        return printed.includes(`waiting: ${slotReason}`) ? printed : undefined;
      },
      '`dura get` of a run waiting for a slot to say what it waits for',
      60_000,
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; it last printed:\n${printed}`);
    });
    expect(shown).toMatch(/status +waiting, for capacity of openai\/fake-1 \(concurrent calls\)/);
    provider.release();

    await Promise.all([
      sys.submit(docRun),
      sys.submit(docPriority),
      ...laterRuns.map(submitModelRun),
      ...keyed.map((request) => sys.submit(request)),
    ]);
    // Runs over the rate wait for it (for their tickets, or in its line), and the API says so.
    await eventually(
      () => waitingFor(laterRuns, REASON),
      'a run waiting for the rate in GET /runs/:id',
      60_000,
    );

    // A planner dies without warning while calls are admitted and in flight; another takes its place.
    await planners[0]!.kill('SIGKILL');
    planners.push(await sys.startExtra('planner'));

    for (const { runId } of [...modelRuns, ...keyed, docRun, docPriority]) {
      const watched = await watchToEnd(sys, runId, 120_000);
      expect(watched.at(-1)?.type, `${runId}: ${watched.map((e) => e.type).join(', ')}`).toBe(
        'run_completed',
      );
    }
    const calls = provider.server.requests.length;
    const refused = provider.refusals.length;
    // Every run's decision was asked for, and (almost) none of the calls went over the provider's limits.
    expect(calls).toBeGreaterThanOrEqual(modelRuns.length);
    expect(
      refused,
      `${refused} of ${calls} calls refused with 429: ${provider.refusals.join(', ')}`,
    ).toBeLessThanOrEqual(Math.floor(calls / 100));
    expect(
      provider.maxInFlight(),
      `in flight at once: ${provider.atMaxInFlight().join(', ')}`,
    ).toBeLessThanOrEqual(CONCURRENT);
    // Runs did wait for capacity, as suspended runs (a recorded timer wait), not in a process.
    const logs = await Promise.all(modelRuns.map(({ runId }) => logOf(sys, runId)));
    const waits = logs.flat().flatMap((e) => (e.type === 'wait_requested' ? [e.data] : []));
    expect(waits.filter((w) => w.reason === REASON).length).toBeGreaterThan(0);
    expect(waits.every((w) => w.kind === 'timer' && w.reason?.startsWith(`capacity of ${MODEL} (`))).toBe(
      true,
    );
    // Each wait ended by its timer (fired sooner when capacity came free first).
    const fired = new Set(logs.flat().flatMap((e) => (e.type === 'timer_fired' ? [e.data.waitId] : [])));
    expect(waits.filter((w) => !fired.has(w.waitId))).toEqual([]);
    // Each wait ended once: a wake moved its timer rather than ending the wait beside it.
    for (const log of logs) {
      const ended = log.flatMap((e) => (e.type === 'timer_fired' ? [e.data.waitId] : []));
      expect(ended.length, `${ended.join(', ')}`).toBe(new Set(ended).size);
    }
    // Each run's decision was recorded once: a wait never made a run ask the model twice.
    for (const log of logs) expect(log.filter((e) => e.type === 'thought')).toHaveLength(1);

    // Never two runs of a key in a step at once, and each key was used.
    for (let k = 0; k < KEYS; k += 1)
      expect(keyWitness.maxInside(`customer:${k}`), `key customer:${k}`).toBe(1);
    // A run over its key's limit waited for it, and says so in its log.
    const keyedWaits = await Promise.all(keyed.map(async ({ runId }) => logOf(sys, runId)));
    const reasons = keyedWaits.flatMap((events) =>
      events.flatMap((e) => (e.type === 'wait_requested' ? [e.data.reason] : [])),
    );
    expect(reasons).toContain('capacity of concurrency key customer:0 (limit 1)');
    for (const planner of planners.slice(1)) await planner.kill('SIGTERM');
  }, 240_000);
});
