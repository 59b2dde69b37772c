import { beforeAll, describe, expect, it } from 'vitest';
import { createEventStore, ensureStreams, StreamUnavailable, type EventStore } from '../src/index';
import { retryUntil, useNatsConnections, useTestInfra } from './infra';
import { runEvents } from './run-events';

const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);
let store: EventStore;

beforeAll(async () => {
  // A service connection: it keeps reconnecting while the server is away.
  const nats = await open({ maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  await ensureStreams(nats.jsm);
  store = createEventStore({ ...nats, ackTimeoutMs: 500 });
});

describe('append while the NATS server is down', () => {
  it('fails fast with StreamUnavailable, then appends again after a restart with the earlier events intact', async (ctx) => {
    if (infra().mode === 'containers') ctx.skip(); // kill()/restart() need a local nats-server
    const run = runEvents('outage');
    const before = await store.append('outage', [run.requested(), run.started()], { expectedSeq: 0 });
    const thought = run.thought();

    await infra().nats.kill();
    const started = Date.now();
    const error = await store
      .append('outage', [thought], { expectedSeq: before.lastSeq })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error).toBeInstanceOf(StreamUnavailable);
    expect(error).toMatchObject({ code: 'stream_unavailable', retryable: true });

    await infra().nats.restart();
    // The caller retries the same append: the msg-id makes it safe even if the first attempt got through.
    const after = await retryUntil(() => store.append('outage', [thought], { expectedSeq: before.lastSeq }));

    expect(after.lastSeq).toBe(before.lastSeq + 1);
    const log = await store.read('outage');
    expect(log.map((e) => e.type)).toEqual(['run_requested', 'run_started', 'thought']);
    expect(log.map((e) => e.seq)).toEqual([...before.seqs, after.lastSeq]);
  });
});
