import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { STREAMS } from '@dura/contracts';
import { DEFAULT_STREAM_OPTIONS } from '@dura/event-store';
import { startNatsServer, type NatsServerHandle } from '@dura/testing';
import { ensureStreamsOnStart } from '../src/index';
import { eventually, recordingLogger } from './infra';

const servers: NatsServerHandle[] = [];
afterAll(async () => {
  for (const server of servers) await server[Symbol.asyncDispose]();
});

async function serverAndManager() {
  const server = await startNatsServer();
  servers.push(server);
  const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  const jsm = await jetstreamManager(nc, { timeout: 1_000 });
  return { server, nc, jsm };
}

const WAITING = 'waiting for JetStream to place the streams; retrying';

describe('ensureStreamsOnStart', () => {
  it('waits, logging each attempt, while JetStream does not answer, and creates the streams once it does', async () => {
    const { server, nc, jsm } = await serverAndManager();
    const { log, records } = recordingLogger();
    const reasons: (string | undefined)[] = [];
    await server.kill();

    const started = ensureStreamsOnStart(jsm, DEFAULT_STREAM_OPTIONS, {
      log,
      initialDelayMs: 50,
      maxDelayMs: 200,
      onWaiting: (reason) => reasons.push(reason),
    });
    await eventually(() => {
      expect(records.filter((r) => r['msg'] === WAITING).length).toBeGreaterThanOrEqual(1);
    }, 60_000);
    expect(records.find((r) => r['msg'] === WAITING)).toMatchObject({ code: 'stream_unavailable' });
    await server.restart();
    await started;

    expect((await jsm.streams.info(STREAMS.runs)).config.name).toBe(STREAMS.runs);
    expect(reasons[0]).toMatch(/^waiting for JetStream to place the streams \(attempt 1 failed: /);
    expect(reasons.at(-1)).toBeUndefined();
    await nc.close();
  });

  it('stops at once, without waiting, when JetStream refuses the streams for good', async () => {
    const { nc, jsm } = await serverAndManager();
    const { log, records } = recordingLogger();

    const error = await ensureStreamsOnStart(jsm, { ...DEFAULT_STREAM_OPTIONS, replicas: 3 }, { log }).catch(
      (err: unknown) => err,
    );

    expect(error).toMatchObject({ code: 'stream_misconfigured', retryable: false });
    expect(records.filter((r) => r['msg'] === WAITING)).toEqual([]);
    await nc.close();
  });
});
