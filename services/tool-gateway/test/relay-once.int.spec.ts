import { describe, expect, it, vi } from 'vitest';
import type { JetStreamClient } from '@nats-io/jetstream';
import { eq } from 'drizzle-orm';
import { STREAMS } from '@dura/contracts';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { ToolRegistry } from '@dura/tools';
import { createEffectLedger } from '../src/effect-ledger';
import { completedEvent } from '../src/observations';
import { createRelay, createToolGateway, outbox, type Relay, type ToolGateway } from '../src/index';
import {
  STREAM_OPTIONS,
  connect,
  countingTool,
  eventually,
  outboxRows,
  publishTask,
  runLog,
  storedMessages,
  testLogger,
  toolTask,
  unsentCount,
  type Connections,
} from './support';
import { useConnections, useGatewayProcesses } from './gateway-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const RUNS = 60;
const STEPS = 5;
const infra = useTestInfra();
const env = useConnections(infra);
const startGateway = useGatewayProcesses(infra);

/**
 * The real JetStream client of a gateway, with every publish to a run log counted by its msg-id before it
 * goes to the server: JetStream drops a second copy, so the stream alone cannot show one was sent.
 */
function countingPublishes(js: JetStreamClient, counts: Map<string, number>): JetStreamClient {
  return new Proxy(js, {
    get(target, prop) {
      if (prop === 'publish') {
        const publish: JetStreamClient['publish'] = (subject, payload, options) => {
          if (subject.startsWith('dura.run.') && options?.msgID)
            counts.set(options.msgID, (counts.get(options.msgID) ?? 0) + 1);
          return target.publish(subject, payload, options);
        };
        return publish;
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('an observation is published once', () => {
  it('by the fast path or by a relay, never both, for many concurrent calls on two replicas', async () => {
    const publishes = new Map<string, number>();
    const tool = countingTool('test.once', { delayMs: 2 });
    const replicas: { conn: Connections; gateway: ToolGateway }[] = [];
    try {
      for (const i of [0, 1]) {
        const conn = await connect(infra().nats.url, infra().db.url, `gateway-once-${i}`);
        const gateway = createToolGateway({
          ...conn,
          js: countingPublishes(conn.js, publishes),
          tools: new ToolRegistry([tool.tool]),
          log: testLogger(`tool-gateway-${i}`),
          concurrency: 32,
          relayPollMs: 50,
          streams: STREAM_OPTIONS,
        });
        replicas.push({ conn, gateway });
      }
      await Promise.all(replicas.map(({ gateway }) => gateway.start()));

      const tasks = Array.from({ length: RUNS * STEPS }, (_, i) =>
        toolTask(`run-once-${i % RUNS}`, 'test.once', { n: i }, Math.floor(i / RUNS) + 1),
      );
      await Promise.all(tasks.map((task) => publishTask(env.setup, task)));

      const completions = await eventually(
        async () => {
          const info = await env.setup.jsm.consumers.info(STREAMS.tasks, 'tool-gateway');
          if (info.num_pending + info.num_ack_pending > 0 || (await unsentCount(env.setup.db)) > 0)
            return undefined;
          const logged = (await storedMessages(env.setup.jsm, STREAMS.runs, 'dura.run.*')).filter((msg) =>
            msg.subject.startsWith('dura.run.run-once-'),
          );
          return logged.length >= tasks.length ? logged : undefined;
        },
        'every call observed and every outbox row marked sent',
        50_000,
      );
      // Each observation is in the log once, and was published once: no copy for JetStream to drop.
      const expected = tasks.map((task) => `${task.idempotencyKey}:result`).sort();
      expect(completions.map((msg) => msg.header?.get('Nats-Msg-Id')).sort()).toEqual(expected);
      expect([...publishes.keys()].sort()).toEqual(expected);
      const twice = [...publishes].filter(([, n]) => n > 1).map(([msgId]) => msgId);
      expect(twice, `${twice.length} of ${tasks.length} observations were published more than once`).toEqual(
        [],
      );
      // The relays' own counts agree with what was seen at the client: fast path and relay add up to one each.
      const counts = replicas.map(({ gateway }) => gateway.relay.publishCounts());
      const total = counts.reduce((sum, c) => sum + c.fastPath + c.relay, 0);
      expect(total).toBe(tasks.length);
      expect(counts.reduce((sum, c) => sum + c.fastPath, 0)).toBeGreaterThan(0);
    } finally {
      await Promise.allSettled(replicas.map(({ gateway }) => gateway.stop()));
      await Promise.allSettled(replicas.map(({ conn }) => conn.close()));
    }
  });

  it('by a relay, in order, once the claim of a writer that never published it runs out', async () => {
    const conn = await connect(infra().nats.url, infra().db.url, 'relay-claim');
    const publishes = new Map<string, number>();
    const relay: Relay = createRelay({
      db: conn.db,
      js: countingPublishes(conn.js, publishes),
      log: testLogger('relay-claim'),
      pollMs: 50,
    });
    try {
      const ledger = createEffectLedger(conn.db, () => new Date(), { fastPathLeaseMs: 1_500 });
      const first = toolTask('run-claim', 'echo', { n: 1 }, 1);
      const second = toolTask('run-claim', 'echo', { n: 2 }, 2);
      for (const task of [first, second]) await ledger.claim(task, 60_000);
      relay.start();
      // The writer of the first row commits it, claimed, and dies before publishing it.
      const one = await ledger.finish(
        first.idempotencyKey,
        { status: 'succeeded', result: 1 },
        completedEvent(first, 1, 1, 0, new Date()),
        0,
        1,
      );
      expect(one.ahead).toBe(false);
      // The second row queues behind it, unclaimed: the relay must not let it overtake the first.
      const two = await ledger.finish(
        second.idempotencyKey,
        { status: 'succeeded', result: 2 },
        completedEvent(second, 2, 1, 0, new Date()),
        0,
        1,
      );
      expect(two.ahead).toBe(true);
      relay.wake();

      const rows = await eventually(async () => {
        const queued = await outboxRows(conn.db, 'run-claim');
        return queued.length === 2 && queued.every((row) => row.sentAt !== null) ? queued : undefined;
      }, 'both rows relayed');
      const [claimed, behind] = rows;
      expect(claimed?.claimedUntil).toBeInstanceOf(Date);
      expect(behind?.claimedUntil).toBeNull();
      // Relayed only after the claim ran out (both times are the database's clock).
      expect(claimed!.sentAt!.getTime()).toBeGreaterThanOrEqual(claimed!.claimedUntil!.getTime());
      const log = await runLog(conn.jsm, 'run-claim');
      expect(log.map((entry) => entry.msgId)).toEqual([
        `${first.idempotencyKey}:result`,
        `${second.idempotencyKey}:result`,
      ]);
      expect([...publishes.values()]).toEqual([1, 1]);
      expect(relay.publishCounts()).toEqual({ fastPath: 0, relay: 2 });
    } finally {
      await relay.stop();
      await conn.close();
    }
  });

  it('by the relay of a restarted gateway, when the gateway was SIGKILLed right after the commit', async () => {
    const start = (name: string, failpoint?: string): Promise<ManagedProcess> =>
      startGateway(name, { METRICS_PORT: '0', DURA_FAILPOINT: failpoint }, 45_000);
    const task = toolTask('run-killed', 'echo', { n: 7 });
    const msgId = `${task.idempotencyKey}:result`;

    const killed = await start('gateway-killed', 'gateway.after-commit:1');
    await publishTask(env.setup, task);
    expect(await killed.exited).toMatchObject({ signal: 'SIGKILL' });
    const [row] = await outboxRows(env.setup.db, 'run-killed');
    expect(row).toMatchObject({ msgId, sentAt: null });
    expect(row?.claimedUntil).toBeInstanceOf(Date);
    expect(await runLog(env.setup.jsm, 'run-killed')).toEqual([]);

    const restarted = await start('gateway-restarted');
    const log = await eventually(
      async () => {
        const [sent] = await env.setup.db.select().from(outbox).where(eq(outbox.msgId, msgId));
        if (!sent?.sentAt) return undefined;
        return runLog(env.setup.jsm, 'run-killed');
      },
      'the committed observation relayed after the restart',
      45_000,
    );
    expect(log.map((entry) => entry.msgId)).toEqual([msgId]);
    // Published once, by the restarted gateway's relay.
    const url = /"msg":"metrics listening","url":"([^"]+)"/.exec(restarted.output())?.[1];
    expect(url).toBeDefined();
    const metrics = await (await fetch(url!)).text();
    const published = (path: string): number =>
      Number(
        new RegExp(`^dura_observations_published_total\\{[^}]*path="${path}"[^}]*\\} (\\d+)`, 'm').exec(
          metrics,
        )?.[1] ?? 0,
      );
    expect(published('relay')).toBe(1);
    expect(published('fast_path')).toBe(0);
  });
});
