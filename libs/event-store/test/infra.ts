import { retryUntil } from '@dura/testing';
export { retryUntil };
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect, type NodeConnectionOptions } from '@nats-io/transport-node';
import { afterAll } from 'vitest';
import { useTestInfra, type TestInfra } from '@dura/testing';

export { useTestInfra };

export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** Opens connections to the spec file's server; every one is closed in afterAll, whether or not the tests passed. */
export function useNatsConnections(
  infra: () => TestInfra,
): (options?: NodeConnectionOptions) => Promise<NatsHandles> {
  const open: NatsConnection[] = [];
  afterAll(async () => {
    await Promise.allSettled(open.map((nc) => nc.close()));
  });
  return async (options = {}) => {
    const nc = await connect({ servers: infra().nats.url, ...options });
    open.push(nc);
    return { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
  };
}
