import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDuraClient } from '@dura/client';
import { DeadLetterSchema, STREAMS, type ScriptedStep } from '@dura/contracts';
import { fold } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { builtinRegistry } from '@dura/tools';
import {
  createPlanner,
  createTenantAdmission,
  TENANT_RUNS_BUCKET,
  parseTenantLimits,
  TENANT_LIMIT_CODE,
  type Planner,
  type TenantLimitPolicy,
} from '../src/index';
import { createScriptedModel } from '@dura/agents';
import {
  STREAM_OPTIONS,
  connect,
  eventually,
  prepare,
  storedMessages,
  testEvent,
  testLogger,
  type Connections,
} from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let setup: Connections;
const replicas: { conn: Connections; planner: Planner }[] = [];

/** The first step waits for the signal `go`: the run stays in flight until the test sends it. */
const WAIT_THEN_END: ScriptedStep[] = [{ tool: 'dura.wait_for_signal', args: { name: 'go' } }];
/** Waits for `go`, then runs a child that waits for `go` too. */
const WAIT_THEN_CHILD: ScriptedStep[] = [
  ...WAIT_THEN_END,
  { tool: 'dura.run_agent', args: { agent: { kind: 'scripted', steps: WAIT_THEN_END } } },
];

async function startReplicas(count: number, maxRuns: string, policy: TenantLimitPolicy): Promise<void> {
  for (let i = 0; i < count; i++) {
    const conn = await connect(infra().nats.url, `planner-${replicas.length}`);
    const planner = createPlanner({
      ...conn,
      model: createScriptedModel(),
      tools: builtinRegistry(),
      log: testLogger('planner'),
      streams: STREAM_OPTIONS,
      tenantLimits: parseTenantLimits(maxRuns, policy),
    });
    await planner.start();
    replicas.push({ conn, planner });
  }
}

async function stopReplicas(): Promise<void> {
  for (const { conn, planner } of replicas.splice(0)) {
    await planner.stop();
    await conn.close();
  }
}

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
});

afterAll(async () => {
  await stopReplicas();
  await setup?.close();
});

async function statusOf(runId: string): Promise<string> {
  const events = await setup.store.read(runId);
  return events.length === 0 ? 'queued' : fold(events).status;
}

async function statuses(runIds: readonly string[]): Promise<string[]> {
  return Promise.all(runIds.map(statusOf));
}

const count = (items: readonly string[], value: string): number => items.filter((s) => s === value).length;

async function deadLetteredRuns(): Promise<string[]> {
  const letters = await storedMessages(setup.jsm, STREAMS.deadLetters, 'dura.dlq.>');
  return letters.map((msg) => DeadLetterSchema.parse(msg.json()).runId ?? '');
}

describe('a tenant at its limit of runs in flight (policy wait)', () => {
  const acme = Array.from({ length: 5 }, (_, i) => `acme-${i}`);
  const globex = Array.from({ length: 3 }, (_, i) => `globex-${i}`);

  beforeAll(async () => {
    // Two replicas share the limit: a slot taken on one is taken on the other.
    await startReplicas(2, 'acme=2', 'wait');
  });

  afterAll(stopReplicas);

  it('starts exactly the limit, holds the rest queued (not rejected, not dead-lettered), and starts one more when one ends', async () => {
    const client = createDuraClient(setup);
    for (const runId of [...acme, ...globex])
      await client.submitRun({
        runId,
        tenant: runId.startsWith('acme') ? 'acme' : 'globex',
        agent: { kind: 'scripted', steps: WAIT_THEN_END },
      });

    // Another tenant is not held back by acme's limit.
    await eventually(async () => {
      const all = await statuses([...acme, ...globex]);
      return count(all.slice(acme.length), 'waiting') === globex.length &&
        count(all.slice(0, acme.length), 'waiting') === 2
        ? all
        : undefined;
    }, 'two acme runs and every globex run to start');
    // Several requeue rounds later, still exactly two acme runs in flight.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const held = await statuses(acme);
    expect(count(held, 'waiting')).toBe(2);
    expect(count(held, 'queued')).toBe(3);
    expect(await deadLetteredRuns()).toEqual([]);

    const done = acme[held.indexOf('waiting')]!;
    await client.signal(done, 'go', { payload: { ok: true } });
    await eventually(
      async () => ((await statusOf(done)) === 'completed' ? true : undefined),
      `${done} to complete`,
    );
    await eventually(async () => {
      const all = await statuses(acme);
      return count(all, 'waiting') === 2 && count(all, 'queued') === 2 ? all : undefined;
    }, 'one more acme run to start');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const after = await statuses(acme);
    expect(count(after, 'completed')).toBe(1);
    expect(count(after, 'waiting')).toBe(2);
    expect(count(after, 'queued')).toBe(2);
    expect(await deadLetteredRuns()).toEqual([]);
  });
});

describe('a tenant at its limit of runs in flight (policy reject)', () => {
  beforeAll(async () => {
    await startReplicas(1, 'zeta=2,*=50', 'reject');
  });

  afterAll(stopReplicas);

  it('rejects the run over the limit with run_rejected, code tenant_limit, naming the tenant and its limit', async () => {
    const client = createDuraClient(setup);
    const runs = ['zeta-0', 'zeta-1'];
    for (const runId of runs)
      await client.submitRun({
        runId,
        tenant: 'zeta',
        agent: { kind: 'scripted', steps: runId === 'zeta-0' ? WAIT_THEN_CHILD : WAIT_THEN_END },
      });
    await eventually(
      async () => (count(await statuses(runs), 'waiting') === 2 ? true : undefined),
      'both zeta runs to start',
    );
    await client.submitRun({
      runId: 'zeta-2',
      tenant: 'zeta',
      agent: { kind: 'scripted', steps: WAIT_THEN_END },
    });
    const rejected = await eventually(async () => {
      const events = await setup.store.read('zeta-2');
      return events.find((e) => e.type === 'run_rejected');
    }, 'the third zeta run to be rejected');
    const state = fold(await setup.store.read('zeta-2'));
    expect(state.status).toBe('rejected');
    expect(state.error?.code).toBe(TENANT_LIMIT_CODE);
    expect(state.error?.message).toContain('tenant zeta already has 2 runs in flight');
    expect(rejected.type).toBe('run_rejected');
    expect(await deadLetteredRuns()).toEqual(['zeta-2']);
    expect(await statuses(runs)).toEqual(['waiting', 'waiting']);
  });

  it("exempts child runs: a parent waiting on its child never waits for its own tenant's slots", async () => {
    const client = createDuraClient(setup);
    // zeta-0 goes on to its child run (a real one: the intake refuses a child its parent never asked for).
    await client.signal('zeta-0', 'go');
    await eventually(
      async () => ((await statusOf('zeta-0-c2')) === 'waiting' ? true : undefined),
      'the child run to start though zeta is at its limit',
    );
    expect(await statuses(['zeta-0', 'zeta-1'])).toEqual(['waiting', 'waiting']);
  });
});

describe('the shared admission of a tenant', () => {
  const admissionOn = (conn: Connections, now: () => number = Date.now) =>
    createTenantAdmission({
      ...conn,
      statusOf: async (runId) => fold(await setup.store.read(runId)).status,
      log: testLogger('planner'),
      clock: now,
      unstartedGraceMs: 60_000,
    });

  it('never admits more than the limit when replicas admit at the same moment', async () => {
    const other = await connect(infra().nats.url, 'planner-other');
    try {
      const [a, b] = [admissionOn(setup), admissionOn(other)];
      const runIds = Array.from({ length: 12 }, (_, i) => `race-${i}`);
      const results = await Promise.all(runIds.map((runId, i) => (i % 2 ? a : b).admit('race', runId, 3)));
      expect(results.filter((r) => r.admitted)).toHaveLength(3);
      // Idempotent: an admitted run asking again (a redelivered request) keeps its slot.
      const admitted = runIds.filter((_, i) => results[i]!.admitted);
      for (const runId of admitted) expect(await a.admit('race', runId, 3)).toEqual({ admitted: true });
    } finally {
      await other.close();
    }
  });

  it('leaks no slot: runs that ended, and runs that never reached the log past the grace, are pruned when full', async () => {
    let now = Date.now();
    const admission = admissionOn(setup, () => now);
    expect(await admission.admit('crashy', 'crashy-ended', 2)).toEqual({ admitted: true });
    expect(await admission.admit('crashy', 'crashy-lost', 2)).toEqual({ admitted: true });
    expect(await admission.admit('crashy', 'crashy-next', 2)).toEqual({ admitted: false, inFlight: 2 });
    // crashy-ended ran and completed (its planner then crashed before anything released); crashy-lost never
    // reached the log (its planner crashed after admitting it and the request went elsewhere).

    await setup.store.append(
      'crashy-ended',
      [
        testEvent(
          'crashy-ended',
          'run_requested',
          {
            request: {
              v: 1,
              runId: 'crashy-ended',
              tenant: 'crashy',
              agent: { kind: 'scripted', steps: [] },
            },
          },
          1,
        ),
        testEvent('crashy-ended', 'run_started', {}, 2),
        testEvent('crashy-ended', 'run_completed', { output: null }, 3),
      ],
      { expectedSeq: 0 },
    );
    now += 30_000;
    expect(await admission.admit('crashy', 'crashy-next', 2)).toEqual({ admitted: true });
    expect(await admission.admit('crashy', 'crashy-last', 2)).toEqual({ admitted: false, inFlight: 2 });
    // crashy-lost is now past the grace; crashy-next (admitted 31 s ago, no event yet either) is not.
    now += 31_000;
    expect(await admission.admit('crashy', 'crashy-last', 2)).toEqual({ admitted: true });
    const kv = await setup.jsm.streams.getMessage(`KV_${TENANT_RUNS_BUCKET}`, {
      last_by_subj: `$KV.${TENANT_RUNS_BUCKET}.crashy`,
    });
    expect(Object.keys(kv!.json<Record<string, number>>()).sort()).toEqual(['crashy-last', 'crashy-next']);
  });
});
