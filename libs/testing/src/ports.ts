import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A TCP port on 127.0.0.1 that is free now and stays free for this process: taken below the OS's
 * ephemeral range, so no outgoing connection (to NATS, to Postgres, anyone's) is ever given it as its local
 * port between this call and a service's bind, or between a killed service and its restart on the same
 * port; and reserved under the temp dir with this process's pid, so parallel spec files never pick the
 * same one. Falls back to a port the OS picks where there is no room below the ephemeral range.
 */
export async function freePort(): Promise<number> {
  const [ephemeralFrom] = ephemeralRange();
  const from = 10_000;
  const to = ephemeralFrom - 1;
  if (to - from >= 1_000) {
    for (let tries = 0; tries < 200; tries += 1) {
      const port = from + Math.floor(Math.random() * (to - from + 1));
      // A port this process already holds has a reservation under its own pid, so `reserve` refuses it too.
      if (!reserve(port)) continue;
      if (await canBind(port)) return port;
      release(port);
    }
  }
  return osPort();
}

const RESERVATIONS = join(tmpdir(), 'dura-test-ports');
const reserved = new Set<number>();

/** The OS's range for the local ports of outgoing connections (Linux; the IANA range elsewhere). */
function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (lo !== undefined && hi !== undefined && Number.isInteger(lo) && Number.isInteger(hi)) return [lo, hi];
  } catch {
    // not Linux
  }
  return [49_152, 65_535];
}

/** Claims `port` for this process: false when a live process holds its reservation. */
function reserve(port: number): boolean {
  const file = join(RESERVATIONS, String(port));
  mkdirSync(RESERVATIONS, { recursive: true });
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
  } catch {
    if (holderAlive(file)) return false;
    try {
      rmSync(file, { force: true });
      writeFileSync(file, String(process.pid), { flag: 'wx' });
    } catch {
      return false;
    }
  }
  if (reserved.size === 0) process.once('exit', releaseAll);
  reserved.add(port);
  return true;
}

function holderAlive(file: string): boolean {
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return false;
    if (pid === process.pid) return true;
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function release(port: number): void {
  reserved.delete(port);
  rmSync(join(RESERVATIONS, String(port)), { force: true });
}

function releaseAll(): void {
  for (const port of [...reserved]) release(port);
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port the OS picks (from its ephemeral range), free a moment ago. */
function osPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('The OS gave no port'))));
    });
  });
}

function canConnect(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    socket.setTimeout(1_000);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/** Resolves once something accepts TCP connections on host:port; rejects after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs = 10_000, host = '127.0.0.1'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await canConnect(port, host))) {
    if (Date.now() > deadline)
      throw new Error(`Nothing accepted connections on ${host}:${port} within ${timeoutMs} ms`);
    await sleep(50);
  }
}
