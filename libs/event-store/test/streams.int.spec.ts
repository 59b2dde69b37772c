import { RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { DuraError, STREAMS, SUBJECTS } from '@dura/contracts';
import {
  createEventStore,
  DEFAULT_STREAM_OPTIONS,
  ensureStreams,
  MAX_CONSUMERS,
  StreamMisconfigured,
  StreamUnavailable,
  streamConfigs,
} from '../src/index';
import { useNatsConnections, useTestInfra } from './infra';
import { runEvents } from './run-events';

const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);

async function configOf(jsm: JetStreamManager, name: string): Promise<StreamConfig> {
  return (await jsm.streams.info(name)).config;
}

async function streamNames(jsm: JetStreamManager): Promise<string[]> {
  return (await jsm.streams.names().next()).sort();
}

// The streams every service ensures at start-up; DURA_EVENTS is the planner's own (event triggers).
const CORE_STREAMS = streamConfigs(DEFAULT_STREAM_OPTIONS)
  .map((config) => config.name)
  .sort();

// Every test starts from a server with no streams, so creation is exercised each time.
beforeEach(async () => {
  const { jsm } = await open();
  for (const name of await streamNames(jsm)) await jsm.streams.delete(name);
});

describe('ensureStreams', () => {
  it('creates the streams of the wire layout', async () => {
    const { jsm } = await open();
    await ensureStreams(jsm);

    expect(await streamNames(jsm)).toEqual(CORE_STREAMS);
    const window = nanos(DEFAULT_STREAM_OPTIONS.duplicateWindowMs);
    expect(await configOf(jsm, STREAMS.requests)).toMatchObject({
      subjects: [SUBJECTS.submit, SUBJECTS.signal, SUBJECTS.fork],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      duplicate_window: window,
    });
    // The log is kept forever (no max_age) and its messages cannot be deleted.
    expect(await configOf(jsm, STREAMS.runs)).toMatchObject({
      subjects: [SUBJECTS.allRuns],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: 0,
      deny_delete: true,
      duplicate_window: window,
    });
    expect(await configOf(jsm, STREAMS.tasks)).toMatchObject({
      subjects: ['dura.task.>'],
      retention: RetentionPolicy.Workqueue,
    });
    expect(await configOf(jsm, STREAMS.deadLetters)).toMatchObject({
      subjects: [SUBJECTS.allDeadLetters],
      retention: RetentionPolicy.Limits,
    });
  });

  it('is idempotent: a second call keeps the streams and their messages', async () => {
    const { js, jsm } = await open();
    await ensureStreams(jsm);
    const created = (await jsm.streams.info(STREAMS.runs)).created;
    await js.publish('dura.run.kept', 'x');

    await ensureStreams(jsm);

    const info = await jsm.streams.info(STREAMS.runs);
    expect(info.created).toBe(created);
    expect(info.state.messages).toBe(1);
    expect(await streamNames(jsm)).toEqual(CORE_STREAMS);
  });

  it('is safe to call concurrently from several connections (every replica does at start-up)', async () => {
    const connections = await Promise.all([open(), open(), open()]);
    for (let round = 0; round < 5; round += 1) {
      const { jsm } = connections[0];
      for (const name of await streamNames(jsm)) await jsm.streams.delete(name);

      const results = await Promise.allSettled(connections.map((c) => ensureStreams(c.jsm)));

      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      expect(await streamNames(jsm)).toEqual(CORE_STREAMS);
    }
  });

  it('updates a changed setting in place, keeping the stored messages', async () => {
    const { js, jsm } = await open();
    await ensureStreams(jsm);
    await js.publish('dura.run.kept', 'x');

    await ensureStreams(jsm, { ...DEFAULT_STREAM_OPTIONS, duplicateWindowMs: 30_000 });

    for (const name of CORE_STREAMS) {
      expect((await configOf(jsm, name)).duplicate_window, name).toBe(nanos(30_000));
    }
    expect((await jsm.streams.info(STREAMS.runs)).state.messages).toBe(1);
  });

  it('limits the consumers of every stream it creates', async () => {
    const { jsm } = await open();
    await ensureStreams(jsm);
    expect((await configOf(jsm, STREAMS.requests)).max_consumers).toBe(MAX_CONSUMERS.requests);
    expect((await configOf(jsm, STREAMS.runs)).max_consumers).toBe(MAX_CONSUMERS.runs);
    expect((await configOf(jsm, STREAMS.tasks)).max_consumers).toBe(MAX_CONSUMERS.tasks);
    expect((await configOf(jsm, STREAMS.deadLetters)).max_consumers).toBe(MAX_CONSUMERS.deadLetters);
    expect((await configOf(jsm, STREAMS.tokens)).max_consumers).toBe(MAX_CONSUMERS.tokens);
  });

  it('leaves the consumer limit of an existing stream as it is (the server refuses to change it) and still updates the rest', async () => {
    const { jsm } = await open();
    // As an older version created it: no consumer limit, no direct gets.
    await jsm.streams.add({ name: STREAMS.runs, subjects: [SUBJECTS.allRuns], allow_direct: false });

    await ensureStreams(jsm);

    const config = await configOf(jsm, STREAMS.runs);
    expect(config.allow_direct).toBe(true);
    expect(config.deny_delete).toBe(true);
    expect(config.max_consumers).toBe(-1);
  });

  it('refuses a stream whose retention cannot be changed in place with StreamMisconfigured', async () => {
    const { jsm } = await open();
    await jsm.streams.add({
      name: STREAMS.tasks,
      subjects: ['dura.task.>'],
      retention: RetentionPolicy.Limits,
    });

    const error = await ensureStreams(jsm).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(StreamMisconfigured);
    expect(error).toBeInstanceOf(DuraError);
    expect(error).toMatchObject({ code: 'stream_misconfigured', retryable: false });
    expect((error as Error).message).toMatch(/DURA_TASKS.*"limits".*"workqueue"/);
    // Nothing was changed behind the operator's back.
    expect((await configOf(jsm, STREAMS.tasks)).retention).toBe(RetentionPolicy.Limits);
  });

  it('refuses three replicas on a single server at once (not retryable), saying which setting to fix', async () => {
    const { jsm } = await open();

    const error = await ensureStreams(jsm, { ...DEFAULT_STREAM_OPTIONS, replicas: 3 }).catch(
      (err: unknown) => err,
    );

    // Waiting would never fix it: a service's start must stop with the reason, not wait forever.
    expect(error).toBeInstanceOf(StreamMisconfigured);
    expect(error).toMatchObject({ code: 'stream_misconfigured', retryable: false });
    expect((error as Error).message).toMatch(/cannot create or update stream DURA_REQUESTS: .*replicas/);
    expect((error as Error).message).toMatch(/DURA_STREAM_REPLICAS is no more than/);
    expect(await streamNames(jsm)).toEqual([]);
  });
});

describe('before ensureStreams', () => {
  it('an append fails with StreamUnavailable that says the streams are missing', async () => {
    const store = createEventStore({ ...(await open()), ackTimeoutMs: 1000 });

    const error = await store
      .append('early', [runEvents('early').requested()], { expectedSeq: 0 })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(StreamUnavailable);
    expect(error).toMatchObject({ code: 'stream_unavailable', retryable: true });
    expect((error as Error).message).toMatch(/no JetStream stream captures this subject/);
  });
});
