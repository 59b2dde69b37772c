import { loadContainerModule } from './load-container-module';
import { natsConfigFile, type StartNatsServerOptions } from './nats-options';
import type { NatsServerHandle } from './nats-server-handle';

const IMAGE = 'nats:2.10-alpine';
const CLIENT_PORT = 4222;
const STORE_DIR = '/data/jetstream';
const CONFIG_FILE = '/etc/dura-nats.conf';

function unsupported(what: string): Promise<never> {
  return Promise.reject(
    new Error(
      `NatsServerHandle.${what}() is not supported in containers mode; run fault tests with DURA_TEST_INFRA=local`,
    ),
  );
}

// Plain GenericContainer rather than @testcontainers/nats: that module always adds --user test --pass test,
// and nats.js v3 ignores credentials in a server URL, so a handle that is just a URL could not connect.
export async function startContainerNatsServer(opts: StartNatsServerOptions): Promise<NatsServerHandle> {
  const { GenericContainer, Wait } = await loadContainerModule(
    'testcontainers',
    () => import('testcontainers'),
  );
  const config = natsConfigFile(opts);
  const command = [
    '-js',
    '-sd',
    STORE_DIR,
    ...(config ? ['-c', CONFIG_FILE] : []),
    ...(opts.extraArgs ?? []),
  ];
  let builder = new GenericContainer(IMAGE)
    .withCommand(command)
    .withExposedPorts(opts.port === undefined ? CLIENT_PORT : { container: CLIENT_PORT, host: opts.port })
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/));
  if (config) builder = builder.withCopyContentToContainer([{ content: config, target: CONFIG_FILE }]);
  const container = await builder.start();
  const port = container.getMappedPort(CLIENT_PORT);
  let stopped: Promise<unknown> | undefined;
  const stop = async () => {
    stopped ??= container.stop();
    await stopped;
  };
  return {
    url: `nats://${container.getHost()}:${port}`,
    port,
    storeDir: STORE_DIR,
    stop,
    kill: () => unsupported('kill'),
    restart: () => unsupported('restart'),
    [Symbol.asyncDispose]: stop,
  };
}
