import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { DuraError, natsServers } from '@dura/contracts';
import type { Logger } from './logger';

export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * Connects and keeps reconnecting for as long as the process lives: a broker restart must not kill a service.
 * The first connection fails fast with a message that says what to check.
 */
export async function connectNats(url: string, name: string, log?: Logger): Promise<NatsHandles> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: natsServers(url),
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      timeout: 5000,
      // Async traces capture a stack trace for every request (each JetStream publish is one): a fifth of
      // the planner's CPU under load. Errors still say what failed; they only lose the caller's frames.
      noAsyncTraces: true,
    });
  } catch (err) {
    throw new DuraError(
      'nats_unreachable',
      `cannot connect to NATS at ${url} (${(err as Error).message}); start a server with JetStream (nats-server -js) or set NATS_URL`,
      { retryable: true, cause: err },
    );
  }
  if (log) void logStatus(nc, log);
  const jsm = await jetstreamManager(nc, { timeout: 10_000 }).catch((err: unknown) => {
    void nc.close();
    throw new DuraError(
      'jetstream_disabled',
      `NATS at ${url} has no JetStream; start it with -js (${(err as Error).message})`,
      {
        cause: err,
      },
    );
  });
  return { nc, js: jetstream(nc, { timeout: 10_000 }), jsm };
}

async function logStatus(nc: NatsConnection, log: Logger): Promise<void> {
  for await (const status of nc.status()) {
    if (status.type === 'disconnect' || status.type === 'reconnect')
      log.warn(`nats ${status.type}`, { server: status.server });
  }
}
