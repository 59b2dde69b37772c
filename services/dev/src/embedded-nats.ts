import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuraError } from '@dura/contracts';

export interface EmbeddedNats {
  url: string;
  /** Where JetStream keeps its files (a temp dir unless a data dir was given). */
  storeDir: string;
  stop(): Promise<void>;
}

const INSTALL_HINT = [
  'nats-server was not found on PATH. Install it, or point NATS_URL at a running server with JetStream:',
  '  Debian/Ubuntu: sudo apt-get install nats-server',
  '  macOS:         brew install nats-server',
  '  any OS:        https://github.com/nats-io/nats-server/releases (put the binary on PATH)',
  '  or set NATS_SERVER_BIN=/path/to/nats-server',
].join('\n');

/** Finds the nats-server binary: NATS_SERVER_BIN, then PATH, then /usr/sbin (where Debian installs it). */
export function findNatsServer(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    env.NATS_SERVER_BIN,
    'nats-server',
    '/usr/sbin/nats-server',
    '/usr/local/bin/nats-server',
  ];
  for (const candidate of candidates) {
    if (candidate && spawnSync(candidate, ['--version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  throw new DuraError('nats_server_missing', INSTALL_HINT);
}

/** The port itself when it is free on 127.0.0.1 (0: any free port), else undefined. */
export async function portIfFree(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface EmbeddedNatsOptions {
  /** Keep the store here (`<dataDir>/nats`); default: a temp dir removed when the server stops. */
  dataDir?: string | undefined;
  /** The port to listen on when it is free, else any free port; 0: any free port (default). */
  preferredPort?: number | undefined;
}

/**
 * Starts a private nats-server with JetStream on the preferred port when free (else any free port); its store
 * lives in `dataDir` or in a temp dir that is removed on stop and on any exit of this process.
 */
export async function startEmbeddedNats(options: EmbeddedNatsOptions = {}): Promise<EmbeddedNats> {
  const bin = findNatsServer();
  const temp = options.dataDir ? undefined : mkdtempSync(join(tmpdir(), 'dura-dev-nats-'));
  const storeDir = temp ?? join(options.dataDir as string, 'nats');
  mkdirSync(storeDir, { recursive: true });
  const removeTemp = (): void => {
    if (temp) rmSync(temp, { recursive: true, force: true });
  };
  try {
    const preferred = options.preferredPort ? await portIfFree(options.preferredPort) : undefined;
    try {
      return await spawnNats(bin, preferred ?? (await anyPort()), storeDir, removeTemp);
    } catch (err) {
      // Taken between the check and the server's bind: any free port will do.
      if (preferred === undefined) throw err;
      return await spawnNats(bin, await anyPort(), storeDir, removeTemp);
    }
  } catch (err) {
    removeTemp();
    throw err;
  }
}

async function anyPort(): Promise<number> {
  const port = await portIfFree(0);
  if (port === undefined) throw new DuraError('nats_start_failed', 'no free TCP port on 127.0.0.1');
  return port;
}

async function spawnNats(
  bin: string,
  port: number,
  storeDir: string,
  removeTemp: () => void,
): Promise<EmbeddedNats> {
  const child: ChildProcess = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // On any exit (Ctrl-C, an error, process.exit): no server left behind, no temp dir either.
  const onExit = (): void => {
    child.kill('SIGKILL');
    removeTemp();
  };
  process.once('exit', onExit);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new DuraError('nats_start_timeout', `nats-server did not start in 10 s:\n${output}`)),
      10_000,
    );
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server is ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new DuraError('nats_start_failed', `nats-server exited with code ${code}:\n${output}`));
    });
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    storeDir,
    stop: async () => {
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
      process.off('exit', onExit);
      removeTemp();
    },
  };
}
