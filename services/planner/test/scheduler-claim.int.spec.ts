// Two scheduler replicas racing on the same ticks of one schedule, on a real NATS: the replica whose
// compare-and-set decided a tick is the only one that publishes and logs its run, even while its publish
// is slow and the other replica reads the decision many times meanwhile. A decision whose replica stalls
// is taken over once it stayed unchanged for the claim timeout.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { JetStreamClient } from '@nats-io/jetstream';
import { SUBJECTS } from '@dura/contracts';
import { createScheduleStore, type ScheduleStore } from '@dura/event-store';
import { useTestInfra } from '@dura/testing';
import { createScheduler, type Scheduler, type SchedulerDeps } from '../src/scheduler';
import { connect, eventually, prepare, type Connections } from './support';
import { recordingLogger } from './snapshot-support';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let setup: Connections;
let store: ScheduleStore;
const opened: Connections[] = [];
const started: Scheduler[] = [];

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  store = createScheduleStore({ js: setup.js });
});

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  for (const conn of opened) await conn.close();
  await setup?.close();
});

/** A JetStream client whose publishes to `dura.submit` are counted by msg-id and pass through `gate` first. */
function gated(js: JetStreamClient, gate: () => Promise<void>, published: string[]): JetStreamClient {
  return new Proxy(js, {
    get(target, prop) {
      if (prop === 'publish')
        return async (...args: Parameters<JetStreamClient['publish']>) => {
          if (args[0] === SUBJECTS.submit) {
            await gate();
            published.push(args[2]?.msgID ?? '?');
          }
          return target.publish(...args);
        };
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function replica(
  name: string,
  gate: () => Promise<void>,
  options: Partial<SchedulerDeps> = {},
): Promise<{ starts: () => string[]; published: string[]; warnings: () => string[]; scheduler: Scheduler }> {
  const conn = await connect(infra().nats.url, name);
  opened.push(conn);
  const { log, records, warnings } = recordingLogger();
  const published: string[] = [];
  const scheduler = createScheduler({
    js: gated(conn.js, gate, published),
    log,
    clock: () => new Date(),
    runOf: () => Promise.resolve({ status: 'none', tenant: 'acme', schedule: undefined }),
    pollMs: 30,
    replicaId: name,
    ...options,
  });
  started.push(scheduler);
  const starts = () =>
    records.filter((r) => r['msg'] === 'schedule started a run').map((r) => String(r['runId']));
  return { starts, published, warnings, scheduler };
}

const schedule = (id: string) => ({
  id,
  tenant: 'acme',
  everyMs: 1000,
  overlap: 'allow_all' as const,
  request: { v: 1 as const, agent: { kind: 'scripted' as const, steps: [] } },
});

const slow = () => new Promise<void>((resolve) => setTimeout(resolve, 400));
const tally = (ids: string[]) => ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map());

describe('two replicas on one tick', () => {
  it('only the replica that decided a tick publishes and logs its run, however slow its publish', async () => {
    await store.create(schedule('race'), Date.now());
    const replicas = [await replica('replica-a', slow), await replica('replica-b', slow)];
    for (const r of replicas) r.scheduler.start();
    const starts = () => replicas.flatMap((r) => r.starts());
    await eventually(
      () => Promise.resolve(new Set(starts()).size >= 4 ? true : undefined),
      'four ticks started',
      30_000,
    );
    await Promise.all(replicas.map((r) => r.scheduler.stop()));

    const logged = tally(starts());
    const published = tally(replicas.flatMap((r) => r.published));
    // Each run logged and published once: the other replica read the decision but skipped it.
    expect(
      [...logged.values()].every((n) => n === 1),
      `starts logged: ${JSON.stringify([...logged])}`,
    ).toBe(true);
    expect(
      [...published.values()].every((n) => n === 1),
      `publishes: ${JSON.stringify([...published])}`,
    ).toBe(true);
    expect(new Set(published.keys())).toEqual(new Set(logged.keys()));
    await store.remove('race');
  });

  it('a decision whose replica stalls before publishing is published by another after the claim timeout', async () => {
    let release = (): void => undefined;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    const stuck = await replica('replica-stuck', () => stalled);
    await store.create(schedule('orphan'), Date.now());
    stuck.scheduler.start();
    const claimed = await eventually(
      async () => {
        const record = await store.get('orphan');
        return record.pending.claimedBy === 'replica-stuck' ? record.pending.start : undefined;
      },
      'the stuck replica to claim a tick',
      30_000,
    );
    const healthy = await replica('replica-healthy', () => Promise.resolve(), { claimTimeoutMs: 1000 });
    const before = Date.now();
    healthy.scheduler.start();
    await eventually(
      () => Promise.resolve(claimed.every((c) => healthy.starts().includes(c.runId)) ? true : undefined),
      'the healthy replica to publish the stalled tick',
      30_000,
    );
    // Not before the holder had the whole timeout to publish.
    expect(Date.now() - before).toBeGreaterThanOrEqual(1000);
    expect(healthy.warnings().join('\n')).toMatch(/schedule decision left unpublished by its replica/);
    release();
    await Promise.all([stuck.scheduler.stop(), healthy.scheduler.stop()]);
  });
});
