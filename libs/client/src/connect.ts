import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { DuraError, natsServers } from '@dura/contracts';
import { createDuraClient, type DuraClient, type JetStreamHandles } from './client';
import { NatsUnreachable } from './errors';

export interface ConnectDuraClientOptions {
  /** Default `nats://127.0.0.1:4222`. */
  natsUrl?: string;
  /** The projector's read API, for listRuns, stateAt and events. */
  apiUrl?: string;
  /** Connection name shown by the NATS server (default `dura-client`). */
  name?: string;
  /** How long the first connection may take, default 5 s. */
  connectTimeoutMs?: number;
}

export type ConnectedDuraClient = DuraClient & {
  /** Drains and closes the NATS connection if one was opened. */
  close(): Promise<void>;
};

/**
 * A client that owns its NATS connection, opened on the first call that needs NATS (read-API calls never
 * open it) and kept reconnecting after that, so a broker restart does not end a watch.
 */
export function connectDuraClient(options: ConnectDuraClientOptions = {}): ConnectedDuraClient {
  const url = options.natsUrl ?? 'nats://127.0.0.1:4222';
  let nc: NatsConnection | undefined;
  async function open(): Promise<JetStreamHandles> {
    try {
      nc = await connect({
        servers: natsServers(url),
        name: options.name ?? 'dura-client',
        timeout: options.connectTimeoutMs ?? 5000,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
      });
    } catch (err) {
      throw new NatsUnreachable(url, err);
    }
    try {
      return { js: jetstream(nc), jsm: await jetstreamManager(nc, { timeout: 5000 }) };
    } catch (err) {
      await nc.close();
      throw new DuraError(
        'jetstream_disabled',
        `NATS at ${url} answered but JetStream did not (${(err as Error).message}): start nats-server with -js`,
        { cause: err },
      );
    }
  }
  const client = createDuraClient({
    connectNats: open,
    ...(options.apiUrl === undefined ? {} : { apiUrl: options.apiUrl }),
  });
  return {
    ...client,
    async close() {
      if (nc && !nc.isClosed()) await nc.drain().catch(() => nc?.close());
    },
  };
}
