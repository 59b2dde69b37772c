import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect, type NodeConnectionOptions } from '@nats-io/transport-node';
import { afterAll } from 'vitest';
import type { TestInfra } from './use-test-infra';

/** A plain client connection of a test, with its JetStream client and manager. */
export interface TestNatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * Registers an afterAll in the calling spec file and returns an opener of connections to its server (plain
 * client connections, `options` on top); every one is closed in afterAll, whether or not the tests passed.
 */
export function useNatsConnections(
  infra: () => TestInfra,
): (options?: NodeConnectionOptions) => Promise<TestNatsHandles> {
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
