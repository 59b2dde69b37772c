import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import { afterAll } from 'vitest';
import { useTestInfra, type TestInfra } from '@dura/testing';

export { useTestInfra };

export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  /** The bucket through the object store API directly, bypassing the payload store's checks. */
  rawBucket: (name: string) => Promise<ObjectStore>;
}

/** Opens connections to the spec file's server; every one is closed in afterAll, whether or not the tests passed. */
export function useNatsConnections(infra: () => TestInfra): () => Promise<NatsHandles> {
  const open: NatsConnection[] = [];
  afterAll(async () => {
    await Promise.allSettled(open.map((nc) => nc.close()));
  });
  return async () => {
    const nc = await connect({ servers: infra().nats.url });
    open.push(nc);
    const js = jetstream(nc);
    return { nc, js, rawBucket: (name) => new Objm(js).open(name) };
  };
}
