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

/** Retries `attempt` until it resolves or `timeoutMs` passes; rethrows the last error. */
export async function retryUntil<T>(
  attempt: () => Promise<T>,
  timeoutMs = 15_000,
  pauseMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}
