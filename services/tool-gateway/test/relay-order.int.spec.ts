import { describe, expect, it, vi } from 'vitest';
import { asc, like } from 'drizzle-orm';
import type { JetStreamClient } from '@nats-io/jetstream';
import postgres from 'postgres';
import { STREAMS, runSubject } from '@dura/contracts';
import { openDatabase } from '@dura/db';
import { startPrivatePostgres, useTestInfra } from '@dura/testing';
import { createRelay, migrateGateway, outbox, type Relay } from '../src/index';
import { eventually, sleep, storedMessages, testLogger } from './support';
import { observation, useRelays } from './gateway-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const env = useRelays(infra);

function row(runId: string, msgId: string, n: number) {
  return { runId, msgId, subject: runSubject(runId), payload: observation(runId, msgId, n) };
}

/** Inserts a row through a plain postgres.js connection or transaction, outside drizzle and the relay's pool. */
async function insertRaw(sql: postgres.Sql, runId: string, msgId: string, n: number): Promise<void> {
  const payload = sql.json(observation(runId, msgId, n));
  await sql`insert into outbox (run_id, msg_id, subject, payload)
    values (${runId}, ${msgId}, ${runSubject(runId)}, ${payload})`;
}

/** Publishes after a random pause of up to 3 ms, so relays racing each other interleave their publishes. */
function jittery(js: JetStreamClient): JetStreamClient {
  return new Proxy(js, {
    get(target, prop, receiver) {
      if (prop !== 'publish') return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: Parameters<JetStreamClient['publish']>) => {
        await sleep(Math.random() * 3);
        return target.publish(...args);
      };
    },
  });
}

async function startRelay(
  name: string,
  options: { pollMs: number; batchSize?: number; jitter?: boolean },
): Promise<Relay> {
  const conn = await env.open(name);
  const js = options.jitter ? jittery(conn.js) : conn.js;
  const relay = createRelay({ db: conn.db, js, log: testLogger(name), ...options });
  relay.start();
  env.running.push(relay);
  return relay;
}

async function loggedIds(subject: string): Promise<string[]> {
  const messages = await storedMessages(env.setup.jsm, STREAMS.runs, subject);
  return messages.map((msg) => msg.header?.get('Nats-Msg-Id') ?? '');
}

/** Resolves with the ms from now until `msgId` is on `subject`'s log. */
async function publishedWithin(subject: string, msgId: string): Promise<number> {
  const started = Date.now();
  await eventually(
    async () => ((await loggedIds(subject)).includes(msgId) ? true : undefined),
    `${msgId} on ${subject}`,
    10_000,
  );
  return Date.now() - started;
}

describe('the outbox relay, woken by NOTIFY', () => {
  it('publishes a row committed by another connection long before its next poll', async () => {
    await startRelay('relay-notify-a', { pollMs: 5_000 });
    await startRelay('relay-notify-b', { pollMs: 5_000 });
    await sleep(500); // both relays have made their first pass and sleep on their 5 s poll
    for (const n of [1, 2, 3]) {
      const runId = `run-notify-${n}`;
      const inserted = env.setup.db.insert(outbox).values(row(runId, `notify-${n}`, n));
      await inserted;
      expect(await publishedWithin(runSubject(runId), `notify-${n}`)).toBeLessThan(1_000);
      await sleep(300);
    }
  });

  it('keeps waking after its Postgres server restarts', async () => {
    await using pg = await startPrivatePostgres();
    const database = await openDatabase({ url: pg.url });
    const nats = await env.open('relay-restart');
    let listens = 0;
    const relay = createRelay({
      db: database.db,
      js: nats.js,
      log: testLogger('relay-restart'),
      pollMs: 5_000,
      listen: (channel, onNotify, onListening) =>
        database.listen(channel, onNotify, () => {
          listens += 1;
          onListening?.();
        }),
    });
    try {
      await migrateGateway(database);
      relay.start();
      const writer = postgres(pg.url, { max: 1, onnotice: () => undefined });
      try {
        await eventually(() => Promise.resolve(listens === 1 ? true : undefined), 'the relay to listen');
        await pg.kill();
        await pg.restart();
        await eventually(
          () => Promise.resolve(listens === 2 ? true : undefined),
          'the relay to listen again',
        );
        await insertRaw(writer, 'run-pg-restart', 'pg-restart-1', 1);
        expect(await publishedWithin(runSubject('run-pg-restart'), 'pg-restart-1')).toBeLessThan(1_000);
      } finally {
        await writer.end({ timeout: 1 });
      }
    } finally {
      await relay.stop();
      await database.close();
    }
  });

  it('wakes on commit with embedded PGlite too', async () => {
    const database = await openDatabase({});
    const relay = createRelay({
      db: database.db,
      js: env.setup.js,
      log: testLogger('relay-pglite'),
      pollMs: 5_000,
    });
    try {
      await migrateGateway(database);
      relay.start();
      await sleep(300);
      await database.db.insert(outbox).values(row('run-pglite', 'pglite-1', 1));
      expect(await publishedWithin(runSubject('run-pglite'), 'pglite-1')).toBeLessThan(1_000);
    } finally {
      await relay.stop();
      await database.close();
    }
  });
});

describe('the outbox relay with several replicas', () => {
  it('publishes each run in outbox-id order while two relays race and three writers insert', async () => {
    const RUNS = 4;
    const PER_WRITER = 40;
    await startRelay('relay-race-a', { pollMs: 20, batchSize: 5, jitter: true });
    await startRelay('relay-race-b', { pollMs: 20, batchSize: 5, jitter: true });
    const writers = await Promise.all(
      ['w1', 'w2', 'w3'].map(async (name) => {
        const conn = await env.open(name);
        return { name, conn };
      }),
    );
    await Promise.all(
      writers.map(async ({ name, conn }) => {
        for (let n = 1; n <= PER_WRITER; n += 1) {
          const runId = `run-race-order-${n % RUNS}`;
          await conn.db.insert(outbox).values(row(runId, `${name}-${n}`, n));
          if (n % 7 === 0) await sleep(2);
        }
      }),
    );
    const total = writers.length * PER_WRITER;
    await eventually(
      async () => {
        const rows = await env.setup.db.select().from(outbox).where(like(outbox.runId, 'run-race-order-%'));
        return rows.length === total && rows.every((r) => r.sentAt !== null) ? true : undefined;
      },
      'every row to be relayed',
      30_000,
    );
    for (let r = 0; r < RUNS; r += 1) {
      const runId = `run-race-order-${r}`;
      const rows = await env.setup.db
        .select()
        .from(outbox)
        .where(like(outbox.runId, runId))
        .orderBy(asc(outbox.id));
      expect(await loggedIds(runSubject(runId)), `order of ${runId}`).toEqual(rows.map((x) => x.msgId));
    }
  });

  it('numbers a run’s rows in commit order, so a later row is never visible before an earlier one', async () => {
    const relay = await startRelay('relay-commit-order', { pollMs: 20 });
    const first = postgres(infra().db.url, { max: 1, onnotice: () => undefined });
    const second = postgres(infra().db.url, { max: 1, onnotice: () => undefined });
    let releaseFirst = () => undefined as void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstInserted = () => undefined as void;
    const firstIn = new Promise<void>((resolve) => (firstInserted = resolve));
    const transactions: Promise<unknown>[] = [];
    try {
      transactions.push(
        first.begin(async (tx) => {
          await insertRaw(tx as unknown as postgres.Sql, 'run-commit', 'commit-a', 1);
          firstInserted();
          await firstHeld;
        }),
      );
      await firstIn;
      // Starts after the first transaction's insert, and would commit first if nothing held it back.
      let secondDone = false;
      transactions.push(
        second
          .begin((tx) => insertRaw(tx as unknown as postgres.Sql, 'run-commit', 'commit-b', 2))
          .then(() => (secondDone = true)),
      );
      relay.wake();
      await sleep(400);
      expect(secondDone, 'the second insert waits for the first transaction of the run').toBe(false);
      expect(await loggedIds(runSubject('run-commit'))).toEqual([]);
      releaseFirst();
      await Promise.all(transactions);
      await publishedWithin(runSubject('run-commit'), 'commit-b');
      expect(await loggedIds(runSubject('run-commit'))).toEqual(['commit-a', 'commit-b']);
      const rows = await env.setup.db.select().from(outbox).where(like(outbox.runId, 'run-commit'));
      const idOf = (msgId: string) => rows.find((x) => x.msgId === msgId)?.id ?? 0;
      expect(idOf('commit-a')).toBeLessThan(idOf('commit-b'));
    } finally {
      releaseFirst();
      await Promise.allSettled(transactions);
      await Promise.all([first.end({ timeout: 1 }), second.end({ timeout: 1 })]);
    }
  });
});
