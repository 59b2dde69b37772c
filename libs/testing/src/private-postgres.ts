import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { onProcessExit } from './exit-hooks';
import { createOutputLog } from './output-log';
import { freePort, waitForPort } from './ports';

/** A Postgres server of its own (not a database on a shared server), so a test can kill and restart it. */
export interface PrivatePostgresHandle {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust auth). */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Server output so far (the last ~200 KB), for failure messages. */
  output(): string;
  /** Fast shutdown (SIGINT: clients are disconnected, nothing is lost); waits for exit. */
  stop(): Promise<void>;
  /** SIGKILL of the postmaster and every backend at once: a crash, followed by recovery on restart. */
  kill(): Promise<void>;
  /** Starts again on the same port and data dir (stopping first if running); resolves once it accepts connections. */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  [Symbol.asyncDispose](): Promise<void>;
}

export interface StartPrivatePostgresOptions {
  port?: number;
  /**
   * An empty directory to keep the cluster in (data, socket), e.g. on a small disk a test fills or stalls;
   * default a temp dir. Either way it is removed when the server is stopped for good.
   */
  dir?: string;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string | number>;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
const PORT_ATTEMPTS = 3;
const run = promisify(execFile);

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function hasServer(dir: string): boolean {
  return isExecutable(join(dir, 'postgres')) && isExecutable(join(dir, 'initdb'));
}

/** DURA_TEST_PG_BIN, else `pg_config --bindir`, else the newest /usr/lib/postgresql/<n>/bin. */
async function findServerBinaries(): Promise<string> {
  const fromEnv = process.env['DURA_TEST_PG_BIN'];
  if (fromEnv) {
    if (hasServer(fromEnv)) return fromEnv;
    throw new Error(`DURA_TEST_PG_BIN=${fromEnv} holds no executable postgres and initdb`);
  }
  const candidates: string[] = [];
  try {
    candidates.push((await run('pg_config', ['--bindir'])).stdout.trim());
  } catch {
    // No pg_config on PATH: fall back to the Debian layout below.
  }
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => `/usr/lib/postgresql/${version}/bin`));
  } catch {
    // Not a Debian-style install.
  }
  const found = candidates.find(hasServer);
  if (found) return found;
  throw new Error(
    'startPrivatePostgres() needs the Postgres server binaries (postgres, initdb) and found none via ' +
      '`pg_config --bindir` or in /usr/lib/postgresql/*/bin. Install them (`apt-get install postgresql`) ' +
      'or set DURA_TEST_PG_BIN to the directory that holds them.',
  );
}

/** initdb and postgres refuse to run as root: run them as the `postgres` OS user then. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined)
    throw new Error('startPrivatePostgres() runs as root, so it needs a `postgres` OS user; none exists');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Direct children of `pid` (Linux /proc): the postmaster's backends and auxiliary processes. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return children;
  }
  for (const entry of entries) {
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may contain spaces, so parse after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

const HAS_PROC = existsSync('/proc/self/stat');

function isAlive(pid: number): boolean {
  if (!HAS_PROC) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  try {
    // A zombie (state Z) is dead for our purposes: it holds no shared memory, only an entry awaiting reaping.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function killTree(pid: number): number[] {
  const pids = [pid, ...childrenOf(pid)];
  for (const target of pids) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  return pids;
}

/**
 * Creates a cluster with `initdb` in a temp dir and starts `postgres` on a free port (trust auth, socket in the
 * temp dir), as the `postgres` OS user when the test runs as root. The exit hook kills it with the test process.
 */
export async function startPrivatePostgres(
  options: StartPrivatePostgresOptions = {},
): Promise<PrivatePostgresHandle> {
  const bin = await findServerBinaries();
  const user = serverUser();
  const root = options.dir ?? (await mkdtemp(join(tmpdir(), 'dura-pg-')));
  const forgetRoot = onProcessExit(() => rmSync(root, { recursive: true, force: true }));
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'run');
  const log = createOutputLog('postgres');
  let port = options.port ?? 0;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const removeRoot = async () => {
    forgetRoot();
    await rm(root, { recursive: true, force: true });
  };

  const launch = async (): Promise<void> => {
    const settings = { fsync: 'off', max_connections: 300, ...options.settings };
    const args = ['-D', dataDir, '-p', String(port), '-k', socketDir, '-c', 'listen_addresses=127.0.0.1'];
    for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
    log.append(`--- starting postgres on port ${port}\n`);
    const proc = spawn(join(bin, 'postgres'), args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(user ?? {}),
    });
    child = proc;
    // This launch's own output tail: the log also holds earlier launches, which said "ready" too.
    let recent = '';
    const capture = (chunk: string) => {
      log.append(chunk);
      recent = (recent + chunk).slice(-8192);
    };
    proc.stdout?.setEncoding('utf8').on('data', capture);
    proc.stderr?.setEncoding('utf8').on('data', capture);
    exited = new Promise((resolve) => {
      proc.once('exit', () => resolve());
      proc.once('error', (error) => {
        log.append(`postgres failed to start: ${error.message}\n`);
        resolve();
      });
    });
    const pid = proc.pid;
    const forget = onProcessExit(() => {
      if (pid !== undefined && isAlive(pid)) killTree(pid);
    });
    void exited.then(forget);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!/database system is ready to accept connections/.test(recent)) {
      if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined)
        throw new Error(`postgres exited during start-up. Output tail:\n${log.tail()}`);
      if (Date.now() > deadline)
        throw new Error(`postgres was not ready within ${READY_TIMEOUT_MS} ms. Output tail:\n${log.tail()}`);
      await sleep(50);
    }
    await waitForPort(port, READY_TIMEOUT_MS);
  };

  const kill = async (): Promise<void> => {
    const pid = child?.pid;
    if (pid === undefined || !isAlive(pid)) return;
    const pids = killTree(pid);
    await exited;
    // Backends must be gone too, or the restart finds the old shared memory still attached.
    for (const deadline = Date.now() + STOP_GRACE_MS; pids.some(isAlive) && Date.now() < deadline;)
      await sleep(20);
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGINT');
    const timedOut = await Promise.race([
      exited.then(() => false),
      sleep(STOP_GRACE_MS, undefined, { ref: false }).then(() => true),
    ]);
    if (timedOut) await kill();
  };

  try {
    await mkdir(socketDir);
    if (user) await Promise.all([root, socketDir].map((dir) => chown(dir, user.uid, user.gid)));
    await run(
      join(bin, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { ...(user ?? {}), cwd: root },
    ).catch((error: Error & { stderr?: string }) => {
      throw new Error(`initdb failed: ${error.message}\n${error.stderr ?? ''}`, { cause: error });
    });
    for (let attempt = 1; ; attempt += 1) {
      if (options.port === undefined) port = await freePort();
      try {
        await launch();
        break;
      } catch (error) {
        await kill();
        const portTaken = /could not bind|address already in use/i.test(log.tail());
        if (!portTaken || options.port !== undefined || attempt >= PORT_ATTEMPTS) throw error;
      }
    }
  } catch (error) {
    await removeRoot();
    throw error;
  }

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    output: () => log.text(),
    stop,
    kill,
    restart: async () => {
      await stop();
      await launch();
    },
    [Symbol.asyncDispose]: async () => {
      await stop();
      await removeRoot();
    },
  };
}
