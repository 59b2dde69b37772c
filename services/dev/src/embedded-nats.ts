import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuraError } from '@dura/contracts';

export interface EmbeddedNats {
  url: string;
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

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Starts a private nats-server with JetStream on a free port; its store lives in `dataDir` or a temp dir. */
export async function startEmbeddedNats(dataDir?: string): Promise<EmbeddedNats> {
  const bin = findNatsServer();
  const port = await freePort();
  const storeDir = dataDir ? join(dataDir, 'nats') : mkdtempSync(join(tmpdir(), 'dura-dev-nats-'));
  mkdirSync(storeDir, { recursive: true });
  const child: ChildProcess = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
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
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
