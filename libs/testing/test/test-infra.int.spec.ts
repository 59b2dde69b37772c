import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, spawnManaged, spawnTsEntry, startNatsServer, useTestInfra } from '../src/index';

const infra = useTestInfra();

async function readFirstMessage(url: string, stream: string): Promise<string | undefined> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.getMessage(stream, { seq: 1 }))?.string();
  } finally {
    await nc.close();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('NATS server', () => {
  it('starts with JetStream enabled and stores messages', async () => {
    const nc = await connect({ servers: infra().nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'PROBE', subjects: ['probe.>'], storage: StorageType.File });
      const ack = await jetstream(nc).publish('probe.a', 'hello');
      expect(ack.seq).toBe(1);
    } finally {
      await nc.close();
    }
    expect(await readFirstMessage(infra().nats.url, 'PROBE')).toBe('hello');
  });

  it('keeps stream data across kill() and restart() on the same port', async (ctx) => {
    if (infra().mode === 'containers') ctx.skip();
    const { nats } = infra();
    const portBefore = nats.port;
    await nats.kill();
    await expect(readFirstMessage(nats.url, 'PROBE')).rejects.toThrow();
    await nats.restart();
    expect(nats.port).toBe(portBefore);
    expect(await readFirstMessage(nats.url, 'PROBE')).toBe('hello');
  });

  it('gives each handle its own port and store', async () => {
    await using second = await startNatsServer({ jetStreamMaxFileStore: '64MB' });
    expect(second.port).not.toBe(infra().nats.port);
    expect(second.storeDir).not.toBe(infra().nats.storeDir);
    const nc = await connect({ servers: second.url });
    try {
      // The 64MB server limit only shows when a stream asks for more than it.
      const jsm = await jetstreamManager(nc);
      const big = { subjects: ['big.>'], storage: StorageType.File, max_bytes: 128 * 1024 * 1024 };
      await expect(jsm.streams.add({ name: 'BIG', ...big })).rejects.toThrow(/insufficient storage/i);
      await jsm.streams.add({ name: 'SMALL', ...big, subjects: ['small.>'], max_bytes: 32 * 1024 * 1024 });
    } finally {
      await nc.close();
    }
  });
});

describe('test database', () => {
  it('is created empty and dropped on drop()', async () => {
    const handle = await createTestDatabase({ prefix: 'probe' });
    expect(handle.name).toMatch(/^dura_t_probe_[0-9a-f]+$/);
    const sql = postgres(handle.url, { max: 1, onnotice: () => undefined });
    try {
      const [row] = await sql<{ name: string }[]>`SELECT current_database() AS name`;
      expect(row?.name).toBe(handle.name);
    } finally {
      await sql.end();
    }
    await handle.drop();
    await handle.drop(); // idempotent: teardown may call it again
    const check = postgres(handle.url, { max: 1, connect_timeout: 5, onnotice: () => undefined });
    await expect(check`SELECT 1`).rejects.toThrow();
    await check.end();
  });

  it('gives each handle its own database', async () => {
    await using second = await createTestDatabase();
    expect(second.name).not.toBe(infra().db.name);
    expect(second.url).not.toBe(infra().db.url);
  });
});

describe('managed processes', () => {
  it('captures output and kills with SIGTERM', async () => {
    const proc = spawnManaged({
      name: 'echo',
      command: process.execPath,
      args: [
        '-e',
        'console.log("ready " + process.env.GREETING); console.error("to stderr"); setInterval(() => {}, 1000)',
      ],
      env: { GREETING: 'hi' },
    });
    expect(await proc.waitForOutput(/ready \w+/)).toBe('ready hi');
    await proc.waitForOutput(/to stderr/);
    await proc.kill();
    expect(await proc.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('rejects waitForOutput with the output tail when the process exits early', async () => {
    const proc = spawnManaged({
      name: 'quitter',
      command: process.execPath,
      args: ['-e', 'console.log("bye"); process.exit(3)'],
    });
    await expect(proc.waitForOutput(/never printed/)).rejects.toThrow(/exited \(code 3[\s\S]*bye/);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const proc = spawnManaged({
      name: 'stubborn',
      command: process.execPath,
      args: [
        '-e',
        'process.on("SIGTERM", () => console.log("ignored")); console.log("up"); setInterval(() => {}, 1000)',
      ],
    });
    await proc.waitForOutput(/up/);
    await proc.kill();
    expect((await proc.exited).signal).toBe('SIGKILL');
    expect(proc.output()).toContain('ignored');
  }, 15_000); // the SIGKILL comes after a 5 s grace period

  it('runs TypeScript entries and SIGKILLs children left behind when the parent exits', async () => {
    const parent = spawnTsEntry({
      name: 'leaky-parent',
      entry: fileURLToPath(new URL('./fixtures/leaky-parent.ts', import.meta.url)),
    });
    const line = await parent.waitForOutput(/child-pid=\d+/);
    const childPid = Number(line.split('=')[1]);
    expect((await parent.exited).code).toBe(0);
    for (let i = 0; i < 40 && isAlive(childPid); i++) await sleep(50);
    expect(isAlive(childPid)).toBe(false);
  });
});
