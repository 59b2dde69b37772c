import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '@dura/contracts';
import { startNatsCluster, type NatsClusterHandle } from '@dura/testing';
import {
  createEventStore,
  createRunReader,
  createRunWakeups,
  ensureStreams,
  followRun,
  type EventStore,
} from '../src/index';
import { runEvents } from './run-events';

// R3 streams on a 3-node cluster; the reader connects to a node that is not the run log's leader, so its
// direct gets may be answered by a replica. On loopback replicas rarely lag (with the leader fallback turned
// off these tests still passed): what a lagging answer does is proven with a simulated replica in
// follow-run.unit.spec.ts; here, that reads and follows through a follower node are whole and in order.
let cluster: NatsClusterHandle;
const connections: NatsConnection[] = [];
let store: EventStore;
let readerUrl: string;

beforeAll(async () => {
  cluster = await startNatsCluster({ nodes: 3 });
  const writer = await connect({ servers: cluster.urls as string[] });
  connections.push(writer);
  const handles = { js: jetstream(writer), jsm: await jetstreamManager(writer) };
  await ensureStreams(handles.jsm, { replicas: 3, duplicateWindowMs: 120_000, storage: 'file' });
  store = createEventStore(handles);
  const leader = (await handles.jsm.streams.info(STREAMS.runs)).cluster?.leader ?? '';
  readerUrl = cluster.nodes.find((node) => node.name !== leader)!.url;
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(connections.map((nc) => nc.close()));
  await cluster?.stop();
});

describe('reading and following a run through a replica', () => {
  it('a read through a follower node right after each acknowledged append returns the whole log', async () => {
    const nc = await connect({ servers: readerUrl });
    connections.push(nc);
    const reader = createRunReader(await jetstreamManager(nc));
    const runId = 'read-through-replica';
    const events = runEvents(runId);
    const appended: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      appended.push(...(await store.append(runId, [events.thought(i)], { expectedSeq: 'any' })).seqs);
      // At once after the ack: the replica answering may not have the event yet.
      expect((await reader.readAll(runId, 1)).map((m) => m.seq)).toEqual(appended);
    }
  });

  it('a follower sees every event of its run once and in order while another run interleaves', async () => {
    const nc = await connect({ servers: readerUrl });
    connections.push(nc);
    const follow = { reader: createRunReader(await jetstreamManager(nc)), wakeups: createRunWakeups(nc) };
    const runId = 'followed-through-replica';
    const mine = runEvents(runId);
    const other = runEvents('interleaved-run');
    const abort = new AbortController();
    const seen: number[] = [];
    const appended: number[] = [];
    const total = 150;
    const following = (async () => {
      for await (const msg of followRun(follow, runId, {
        fromSeq: 1,
        signal: abort.signal,
        pollMs: 600_000,
      })) {
        seen.push(msg.seq);
        if (seen.length === total) abort.abort();
      }
    })();
    for (let i = 0; i < total; i += 1) {
      appended.push(...(await store.append(runId, [mine.thought(i)], { expectedSeq: 'any' })).seqs);
      await store.append('interleaved-run', [other.thought(i)], { expectedSeq: 'any' });
    }
    await following;
    expect(seen).toEqual(appended);
  });
});
