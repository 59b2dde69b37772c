import { startContainerNatsServer } from './container-nats-server';
import { infraMode } from './infra-mode';
import { startLocalNatsServer } from './local-nats-server';
import type { StartNatsServerOptions } from './nats-options';
import type { NatsServerHandle } from './nats-server-handle';

export type { NatsServerHandle } from './nats-server-handle';

/** Starts a fresh JetStream-enabled NATS server on a free port with an empty store, and waits until it is ready. */
export async function startNatsServer(opts: StartNatsServerOptions = {}): Promise<NatsServerHandle> {
  return (await infraMode()) === 'containers' ? startContainerNatsServer(opts) : startLocalNatsServer(opts);
}
