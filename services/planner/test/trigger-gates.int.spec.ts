// Debounce and skip-if-running of event triggers on two planner replicas sharing one NATS: windows end once
// with their last event, a key with a run in flight starts nothing, and a window whose planner died (its
// record left open, or closed and not published) still starts its run once.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { SIGNAL_VERSION, STREAMS, SUBJECTS, type EventTriggerSpec, type GateRecord } from '@dura/contracts';
import { createRunGates, createTriggerStore, gateEntryName } from '@dura/event-store';
import { useTestInfra } from '@dura/testing';
import { BUILTIN_TOOLS, ToolRegistry } from '@dura/tools';
import { createScriptedModel } from '@dura/agents';
import { createPlanner, type Planner } from '../src/index';
import { triggerScope } from '../src/trigger-gate';
import { STREAM_OPTIONS, connect, eventually, prepare, type Connections } from './support';
import { recordingLogger } from './snapshot-support';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let setup: Connections;
const replicas: { conn: Connections; planner: Planner; records: Record<string, unknown>[] }[] = [];
const WINDOW_MS = 1500;

const echoPlan = { v: 1 as const, agent: { kind: 'scripted' as const, steps: [{ tool: 'echo', args: {} }] } };
const emptyPlan = { v: 1 as const, agent: { kind: 'scripted' as const, steps: [] } };
const triggers: EventTriggerSpec[] = [
  {
    id: 'deb',
    tenant: 'acme',
    subject: 'dura.event.deb',
    request: emptyPlan,
    debounce: { key: 'customer-{$input.customer}', windowMs: WINDOW_MS },
  },
  {
    id: 'solo',
    tenant: 'acme',
    subject: 'dura.event.solo',
    // No gateway runs here: its echo call stays in flight, so the run stays running until cancelled.
    request: echoPlan,
    dedupe: { key: '$input.customer', policy: 'skip-if-running' },
  },
  {
    id: 'both',
    tenant: 'acme',
    subject: 'dura.event.both',
    request: echoPlan,
    debounce: { key: '$input.customer', windowMs: WINDOW_MS },
    dedupe: { key: '$input.customer', policy: 'skip-if-running' },
  },
];

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  for (const spec of triggers) await createTriggerStore({ js: setup.js }).create(spec, Date.now());
  for (const name of ['planner-a', 'planner-b']) {
    const conn = await connect(infra().nats.url, name);
    const { log, records } = recordingLogger();
    const planner = createPlanner({
      ...conn,
      model: createScriptedModel(),
      tools: new ToolRegistry(BUILTIN_TOOLS),
      log,
      streams: STREAM_OPTIONS,
      eventTriggers: { pollMs: 100, gatePollMs: 40 },
    });
    await planner.start();
    replicas.push({ conn, planner, records });
  }
  for (const { id } of triggers)
    await eventually(
      async () =>
        (await setup.jsm.consumers.info(STREAMS.events, `trigger-${id}`).catch(() => null))
          ? true
          : undefined,
      `trigger ${id} bound`,
    );
});

afterAll(async () => {
  for (const { planner, conn } of replicas) {
    await planner.stop();
    await conn.close();
  }
  await setup?.close();
});

const publish = (subject: string, body: object, id: string) => {
  const h = natsHeaders();
  h.set('Nats-Msg-Id', id);
  return setup.js.publish(subject, JSON.stringify(body), { headers: h });
};

/** Run ids in the log that start with `prefix`. */
async function runsOf(prefix: string): Promise<string[]> {
  const info = await setup.jsm.streams.info(STREAMS.runs, { subjects_filter: 'dura.run.*' });
  return Object.keys(info.state.subjects ?? {})
    .map((s) => s.slice('dura.run.'.length))
    .filter((runId) => runId.startsWith(prefix))
    .sort();
}

async function requestOf(runId: string) {
  const events = await eventually(async () => {
    const found = await setup.store.read(runId);
    return found.length > 0 ? found : undefined;
  }, `run ${runId} in the log`);
  const first = events[0];
  if (first?.type !== 'run_requested') throw new Error(`run ${runId} starts with ${first?.type}`);
  return first.data.request;
}

const gates = () => createRunGates({ js: setup.js, phaseOf: () => Promise.resolve('unseen') });
const recordOf = async (trigger: string, key: string): Promise<GateRecord | undefined> =>
  (await gates().read(gateEntryName(triggerScope(trigger), key)))?.record;
const logged = (msg: string) => replicas.flatMap((r) => r.records).filter((record) => record['msg'] === msg);

async function cancel(runId: string): Promise<void> {
  const body = { v: SIGNAL_VERSION, runId, signalId: `cancel-${runId}`, name: 'cancel' };
  await setup.js.publish(SUBJECTS.signal, JSON.stringify(body), { msgID: `signal:${runId}:cancel` });
  await eventually(
    async () => ((await setup.store.read(runId)).at(-1)?.type === 'run_cancelled' ? true : undefined),
    `${runId} cancelled`,
  );
}

describe('debounce on two planners', () => {
  it('three events of a key within the window start one run, with the last one as input', async () => {
    await publish('dura.event.deb', { customer: 'c1', n: 1 }, 'deb-1');
    await publish('dura.event.deb', { customer: 'c1', n: 2 }, 'deb-2');
    await publish('dura.event.deb', { customer: 'c2', n: 1 }, 'deb-3');
    await publish('dura.event.deb', { customer: 'c1', n: 3 }, 'deb-4');
    const [first, second] = await eventually(async () => {
      const found = await runsOf('trg-deb-');
      return found.length >= 2 ? found : undefined;
    }, 'the two windows started their runs');
    const inputs = await Promise.all([first, second].map(async (runId) => (await requestOf(runId!)).input));
    expect(inputs).toEqual(
      expect.arrayContaining([
        { customer: 'c1', n: 3 },
        { customer: 'c2', n: 1 },
      ]),
    );
    // A window ends once: no further run, however long both planners keep passing.
    await new Promise((resolve) => setTimeout(resolve, 2 * WINDOW_MS));
    expect(await runsOf('trg-deb-')).toHaveLength(2);
    expect(await runsOf('trg-deb-deb')).toEqual([]);
    const c1 = await recordOf('deb', 'customer-c1');
    // Two planners may take c1's events out of order: one overtaken by a later event is dropped as stale, and
    // counted in the window it was overtaken into. Three events of c1 arrived: one run, two dropped.
    expect(c1).toMatchObject({ counts: { started: 1, debounced: 2 } });
    expect(c1?.window).toBeUndefined();
    expect(c1?.firing).toBeUndefined();
    const ended = logged('debounce window ended: run started with its last input');
    expect(ended).toHaveLength(2);
    expect(ended.find((record) => record['key'] === 'customer-c1')).toMatchObject({ events: 3, dropped: 2 });
    const taken = [
      'event debounced: its key window starts the run unless a later event replaces it',
      'event not started: a later event of its key was taken already',
    ].flatMap(logged);
    expect(taken).toHaveLength(4);
  });

  it('an event without the key field is dead-lettered with the reason, and starts nothing', async () => {
    await publish('dura.event.deb', { other: 1 }, 'deb-nokey');
    const letter = await eventually(async () => {
      const info = await setup.jsm.streams.info(STREAMS.deadLetters).catch(() => null);
      for (let seq = info?.state.first_seq ?? 1; info && seq <= info.state.last_seq; seq += 1) {
        const msg = await setup.jsm.streams.getMessage(STREAMS.deadLetters, { seq }).catch(() => null);
        const text = msg?.string() ?? '';
        if (text.includes('has no key for trigger deb')) return text;
      }
      return undefined;
    }, 'the dead letter');
    expect(letter).toContain('no field \\"customer\\"');
  });
});

describe('skip-if-running', () => {
  it('an event while its key has a run in flight starts nothing; after the run ends, the next one starts', async () => {
    await publish('dura.event.solo', { customer: 'k1', n: 1 }, 'solo-1');
    await requestOf('trg-solo-solo-1');
    await publish('dura.event.solo', { customer: 'k1', n: 2 }, 'solo-2');
    await publish('dura.event.solo', { customer: 'k2', n: 1 }, 'solo-3');
    await requestOf('trg-solo-solo-3'); // another key is not held back
    const skipped = await eventually(() => {
      const found = logged('event not started: a run of its key is in flight (skip-if-running)');
      return Promise.resolve(found.length > 0 ? found : undefined);
    }, 'the skip logged');
    expect(skipped[0]).toMatchObject({
      trigger: 'solo',
      key: 'k1',
      running: 'trg-solo-solo-1',
      event: 'solo-2',
    });
    expect(await runsOf('trg-solo-solo-2')).toEqual([]);
    expect((await recordOf('solo', 'k1'))?.counts).toMatchObject({ started: 1, skipped: 1 });

    await cancel('trg-solo-solo-1');
    await publish('dura.event.solo', { customer: 'k1', n: 3 }, 'solo-4');
    expect((await requestOf('trg-solo-solo-4')).input).toEqual({ customer: 'k1', n: 3 });
  });

  it('with debounce: the window ends skipped while the key has a run in flight, and starts after it ends', async () => {
    await publish('dura.event.both', { customer: 'b1', n: 1 }, 'both-1');
    const [running] = await eventually(async () => {
      const found = await runsOf('trg-both-');
      return found.length > 0 ? found : undefined;
    }, 'the first window started');
    await publish('dura.event.both', { customer: 'b1', n: 2 }, 'both-2');
    await eventually(() => {
      const found = logged(
        'debounce window ended: run not started, a run of its key is in flight (skip-if-running)',
      );
      return Promise.resolve(found.length > 0 ? found : undefined);
    }, 'the second window skipped');
    expect(await runsOf('trg-both-')).toEqual([running]);
    await cancel(running!);
    await publish('dura.event.both', { customer: 'b1', n: 3 }, 'both-3');
    const third = await eventually(async () => {
      const found = (await runsOf('trg-both-')).filter((runId) => runId !== running);
      return found.length > 0 ? found : undefined;
    }, 'the third window started');
    expect(third).toHaveLength(1);
    expect((await requestOf(third[0]!)).input).toEqual({ customer: 'b1', n: 3 });
  });
});

describe('a planner that died mid-window', () => {
  it('left a window open (its record is all there is): another replica ends it once, with its last input', async () => {
    // What a planner killed after taking two events leaves: the window in the bucket, nothing else anywhere.
    const trigger = await createTriggerStore({ js: setup.js }).current('deb');
    const scope = triggerScope('deb');
    for (const n of [1, 2])
      await gates().arrive({
        scope,
        key: 'customer-dead',
        request: (runId) => ({ ...emptyPlan, runId, tenant: 'acme', input: { customer: 'dead', n } }),
        source: `dead-${n}`,
        seq: 1_000_000 + n,
        runId: `trg-deb-dead-${n}`,
        skipIfRunning: false,
        debounce: {
          windowMs: 300,
          windowRunId: (at) => `trg-deb-wdead-${at.toString(36)}`,
          triggerRevision: trigger!.revision,
        },
      });
    const [runId] = await eventually(async () => {
      const found = await runsOf('trg-deb-wdead-');
      return found.length > 0 ? found : undefined;
    }, 'the orphaned window started its run');
    expect((await requestOf(runId!)).input).toEqual({ customer: 'dead', n: 2 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await runsOf('trg-deb-wdead-')).toHaveLength(1);
  });

  it('closed a window and died before publishing: another replica publishes it after the claim timeout', async () => {
    const name = gateEntryName(triggerScope('deb'), 'customer-closed');
    const runId = 'trg-deb-wclosed-1';
    const now = Date.now();
    const record: GateRecord = {
      scope: triggerScope('deb'),
      key: 'customer-closed',
      windows: 1,
      run: { runId, at: now },
      firing: {
        runId,
        request: { ...emptyPlan, runId, tenant: 'acme', input: { customer: 'closed' } },
        outcome: 'start',
        events: 1,
        claimedBy: 'replica-killed',
      },
      counts: { started: 1, debounced: 0, skipped: 0 },
      updatedAt: now,
    };
    expect(await gates().compareAndSet(name, record, 0)).toBeDefined();
    expect((await requestOf(runId)).input).toEqual({ customer: 'closed' });
    await eventually(
      async () => ((await gates().read(name))?.record.firing === undefined ? true : undefined),
      'the firing cleared',
    );
  });
});
