import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDuraClient } from '@dura/client';
import { DeadLetterSchema, STREAMS, type ScriptedStep } from '@dura/contracts';
import { fold } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { builtinRegistry } from '@dura/tools';
import {
  createPlanner,
  createScriptedModel,
  parseTenantLimits,
  TENANT_LIMIT_CODE,
  type Planner,
  type TenantLimitPolicy,
} from '../src/index';
import {
  STREAM_OPTIONS,
  connect,
  eventually,
  prepare,
  storedMessages,
  testLogger,
  type Connections,
} from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let setup: Connections;
const replicas: { conn: Connections; planner: Planner }[] = [];

/** The first step waits for the signal `go`: the run stays in flight until the test sends it. */
const WAIT_THEN_END: ScriptedStep[] = [{ tool: 'dura.wait_for_signal', args: { name: 'go' } }];

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
      await client.submitRun({ runId, tenant: 'zeta', agent: { kind: 'scripted', steps: WAIT_THEN_END } });
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
    await client.submitRun({
      runId: 'zeta-child',
      tenant: 'zeta',
      parent: { runId: 'zeta-0', callId: 'call-9' },
      agent: { kind: 'scripted', steps: WAIT_THEN_END },
    });
    await eventually(
      async () => ((await statusOf('zeta-child')) === 'waiting' ? true : undefined),
      'the child run to start though zeta is at its limit',
    );
    expect(await statuses(['zeta-0', 'zeta-1'])).toEqual(['waiting', 'waiting']);
  });
});
