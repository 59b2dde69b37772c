// Test ports: below the OS's ephemeral range (no outgoing connection can be given one), distinct, and
// reserved for this process so parallel spec files do not pick the same one.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../src/index';

const [ephemeralFrom] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
  .trim()
  .split(/\s+/)
  .map(Number);

function listen(port: number): Promise<() => Promise<void>> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(() => new Promise((done) => server.close(() => done()))));
  });
}

describe('freePort', () => {
  it('hands out distinct ports below the ephemeral range, each reserved under this pid and free to bind', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 40; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeralFrom ?? 0);
      expect(readFileSync(join(tmpdir(), 'dura-test-ports', String(port)), 'utf8')).toBe(String(process.pid));
    }
    const closers = await Promise.all(ports.map(listen));
    await Promise.all(closers.map((close) => close()));
  });
});
