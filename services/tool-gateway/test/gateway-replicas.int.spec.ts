import { describe, expect, it, vi } from 'vitest';
import { sql } from 'drizzle-orm';
import { STREAMS } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { effects, outbox } from '../src/index';
import {
  countingTool,
  eventually,
  publishTask,
  storedMessages,
  toolTask,
  unsentCount,
  type CountingTool,
} from './support';
import { useGatewayReplicas } from './gateway-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const TASKS = 40;
const infra = useTestInfra();
// Same tool name in both replicas, counted apart, so the test can tell who ran what.
const tools = [countingTool('test.shared', { delayMs: 20 }), countingTool('test.shared', { delayMs: 20 })];
// Small pulls, so neither replica can take the whole backlog at once.
const env = useGatewayReplicas(
  infra,
  tools.map(({ tool }) => [tool]),
  { concurrency: 4 },
);

describe('two gateways on the same database and stream', () => {
  it('execute each of N tasks exactly once, even when every task is delivered twice', async () => {
    const tasks = Array.from({ length: TASKS }, (_, i) =>
      toolTask(`run-replicas-${i % 4}`, 'test.shared', { n: i }, Math.floor(i / 4) + 1),
    );
    expect(new Set(tasks.map((task) => task.idempotencyKey)).size).toBe(TASKS);
    // Each task twice under different msg-ids: JetStream keeps both, so both replicas may see the same key.
    await Promise.all(
      tasks.flatMap((task) => [
        publishTask(env.setup, task),
        publishTask(env.setup, task, `${task.idempotencyKey}#dup`),
      ]),
    );

    const results = await eventually(
      async () => {
        const info = await env.setup.jsm.consumers.info(STREAMS.tasks, 'tool-gateway');
        if (info.num_pending + info.num_ack_pending > 0 || (await unsentCount(env.setup.db)) > 0)
          return undefined;
        const logged = await storedMessages(env.setup.jsm, STREAMS.runs, 'dura.run.*');
        const completions = logged.filter(
          (msg) => msg.header?.get('Dura-Event-Type') === 'tool_call_completed',
        );
        return completions.length >= TASKS ? completions : undefined;
      },
      `${TASKS} completions on the log`,
      45_000,
    );

    const [a, b] = tools as [CountingTool, CountingTool];
    expect(a.runs() + b.runs()).toBe(TASKS);
    for (const task of tasks) expect(a.runs(task.idempotencyKey) + b.runs(task.idempotencyKey)).toBe(1);
    expect(a.runs()).toBeGreaterThan(0);
    expect(b.runs()).toBeGreaterThan(0);

    const [counts] = await env.setup.db
      .select({
        total: sql<number>`count(*)::int`,
        succeeded: sql<number>`count(*) filter (where status = 'succeeded' and attempts = 1)::int`,
      })
      .from(effects);
    expect(counts).toEqual({ total: TASKS, succeeded: TASKS });
    const [rows] = await env.setup.db.select({ total: sql<number>`count(*)::int` }).from(outbox);
    expect(rows?.total).toBe(TASKS);

    const ids = results.map((msg) => msg.header?.get('Nats-Msg-Id'));
    expect(ids).toHaveLength(TASKS);
    expect(new Set(ids)).toEqual(new Set(tasks.map((task) => `${task.idempotencyKey}:result`)));
  });
});
