// A request that was answered is ended without building the RequestError nobody sees; every other way a
// request ends (no responders, a timeout, a closed connection) still rejects as nats.js rejects it.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NoRespondersError, TimeoutError, type NatsConnection } from '@nats-io/nats-core';
import { skipSettledRequestErrors } from '../src/settled-requests';
import { useNatsConnections, useTestInfra } from './infra';

const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);

// nats.js looks its error classes up on this module object at each use, so a counting subclass put there
// sees every RequestError a request builds.
const require = createRequire(import.meta.url);
const errors = require(join(dirname(require.resolve('@nats-io/nats-core/internal')), 'errors.js')) as {
  RequestError: new (message?: string, options?: ErrorOptions) => Error;
};
const Original = errors.RequestError;
let built = 0;

let nc: NatsConnection;

beforeAll(async () => {
  skipSettledRequestErrors();
  ({ nc } = await open({ noAsyncTraces: true }));
  nc.subscribe('echo', {
    callback: (_err, msg) => {
      msg.respond(msg.data);
    },
  });
  await nc.flush();
  errors.RequestError = class Counted extends Original {
    constructor(message?: string, options?: ErrorOptions) {
      super(message, options);
      built += 1;
    }
  };
});

afterEach(() => {
  built = 0;
});

describe('requests once answered', () => {
  it('resolve with the answer and build no RequestError', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => nc.request('echo', `ping ${i}`, { timeout: 5_000 })),
    );
    expect(answers.map((msg) => msg.string())).toEqual(Array.from({ length: 50 }, (_, i) => `ping ${i}`));
    expect(built).toBe(0);
  });
});

describe('requests that are not answered still reject as before', () => {
  it('no responders', async () => {
    const err = await nc.request('nobody.here', 'x', { timeout: 5_000 }).catch((e: unknown) => e);
    expect((err as Error & { cause?: unknown }).cause).toBeInstanceOf(NoRespondersError);
  });

  it('a timeout', async () => {
    nc.subscribe('silent', { callback: () => undefined });
    await nc.flush();
    const err = await nc.request('silent', 'x', { timeout: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
  });

  it('a connection closed while the request waits', async () => {
    const { nc: other } = await open({ noAsyncTraces: true });
    other.subscribe('slow', { callback: () => undefined });
    await other.flush();
    const pending = other.request('slow', 'x', { timeout: 30_000 }).catch((e: unknown) => e);
    await other.close();
    const err = (await pending) as Error;
    expect(err).toBeInstanceOf(Original);
    expect(err.message).toMatch(/closed|cancelled/i);
  });
});
