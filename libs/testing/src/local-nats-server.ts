import { accessSync, constants, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { onProcessExit } from './exit-hooks';
import { spawnManaged, type ManagedProcess } from './managed-process';
import { natsConfigFile, type StartNatsServerOptions } from './nats-options';
import type { NatsServerHandle } from './nats-server-handle';
import { freePort, waitForPort } from './ports';

const READY_TIMEOUT_MS = 20_000;
// Another process can take the port between freePort() and nats-server binding it; retry with a new one.
const PORT_ATTEMPTS = 3;

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** NATS_SERVER_BIN, else nats-server on PATH, else Debian's /usr/sbin (not on PATH for every user). */
export function findNatsServerBinary(): string {
  const fromEnv = process.env['NATS_SERVER_BIN'];
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new Error(`NATS_SERVER_BIN=${fromEnv} is not an executable file`);
  }
  const dirs = [
    ...(process.env['PATH'] ?? '').split(delimiter).filter(Boolean),
    '/usr/sbin',
    '/usr/local/sbin',
  ];
  const found = dirs.map((dir) => join(dir, 'nats-server')).find(isExecutable);
  if (found) return found;
  throw new Error(
    'nats-server was not found on PATH or in /usr/sbin. Install it with `apt-get install nats-server` ' +
      '(or download a release), or set NATS_SERVER_BIN to its path.',
  );
}

export async function startLocalNatsServer(opts: StartNatsServerOptions): Promise<NatsServerHandle> {
  const bin = findNatsServerBinary();
  const storeDir = opts.storeDir ?? (await mkdtemp(join(tmpdir(), 'dura-nats-')));
  const forgetDir = opts.storeDir
    ? () => undefined
    : onProcessExit(() => rmSync(storeDir, { recursive: true, force: true }));
  const removeStore = async () => {
    forgetDir();
    if (!opts.storeDir) await rm(storeDir, { recursive: true, force: true });
  };
  let port = opts.port ?? 0;
  let proc: ManagedProcess | undefined;

  const launch = async (): Promise<void> => {
    const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir];
    const config = natsConfigFile(opts);
    if (config !== undefined) {
      const file = join(storeDir, 'nats.conf');
      await writeFile(file, config);
      args.push('-c', file);
    }
    const started = spawnManaged({
      name: `nats-server:${port}`,
      command: bin,
      args: [...args, ...(opts.extraArgs ?? [])],
    });
    proc = started;
    try {
      // nats-server logs to stderr; the TCP check guards against a log line that arrives before the listener.
      await started.waitForOutput(/Server is ready/, READY_TIMEOUT_MS);
      await waitForPort(port, READY_TIMEOUT_MS);
    } catch (error) {
      await started.kill('SIGKILL');
      throw error;
    }
  };

  try {
    for (let attempt = 1; ; attempt++) {
      if (opts.port === undefined) port = await freePort();
      try {
        await launch();
        break;
      } catch (error) {
        const portTaken = /address already in use/i.test(proc?.output() ?? '');
        if (!portTaken || opts.port !== undefined || attempt >= PORT_ATTEMPTS) throw error;
      }
    }
  } catch (error) {
    await removeStore();
    throw error;
  }

  const stop = async () => {
    await proc?.kill('SIGTERM');
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    stop,
    kill: async () => {
      await proc?.kill('SIGKILL');
    },
    restart: async () => {
      await stop();
      await launch();
    },
    [Symbol.asyncDispose]: async () => {
      await stop();
      await removeStore();
    },
  };
}
