import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'drizzle-orm';
import { STREAMS } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { ToolRegistry } from '@dura/tools';
import { createToolGateway, effects, outbox, type ToolGateway } from '../src/index';
import {
  STREAM_OPTIONS,
  connect,
  countingTool,
  eventually,
  prepare,
  publishTask,
  storedMessages,
  testLogger,
  toolTask,
  unsentCount,
  type Connections,
  type CountingTool,
} from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const TASKS = 40;
const infra = useTestInfra();
// Same tool name in both replicas, counted apart, so the test can tell who ran what.
const replicas: { tool: CountingTool; conn?: Connections; gateway?: ToolGateway }[] = [
  { tool: countingTool('test.shared', { delayMs: 20 }) },
  { tool: countingTool('test.shared', { delayMs: 20 }) },
];
let setup: Connections;

beforeAll(async () => {
  setup = await prepare(infra().nats.url, infra().db.url);
  for (const [i, replica] of replicas.entries()) {
    replica.conn = await connect(infra().nats.url, infra().db.url, `gateway-${i}`);
    replica.gateway = createToolGateway({
      ...replica.conn,
      tools: new ToolRegistry([replica.tool.tool]),
      log: testLogger(`tool-gateway-${i}`),
      // Small pulls, so neither replica can take the whole backlog at once.
      concurrency: 4,
      relayPollMs: 50,
      streams: STREAM_OPTIONS,
    });
  }
  await Promise.all(replicas.map((replica) => replica.gateway!.start()));
});

afterAll(async () => {
  await Promise.allSettled(replicas.flatMap((replica) => (replica.gateway ? [replica.gateway.stop()] : [])));
  await Promise.allSettled(replicas.flatMap((replica) => (replica.conn ? [replica.conn.close()] : [])));
  await setup?.close();
});

describe('two gateways on the same database and stream', () => {
  it('execute each of N tasks exactly once, even when every task is delivered twice', async () => {
    const tasks = Array.from({ length: TASKS }, (_, i) =>
      toolTask(`run-replicas-${i % 4}`, 'test.shared', { n: i }, Math.floor(i / 4) + 1),
    );
    expect(new Set(tasks.map((task) => task.idempotencyKey)).size).toBe(TASKS);
    // Each task twice under different msg-ids: JetStream keeps both, so both replicas may see the same key.
    await Promise.all(
      tasks.flatMap((task) => [
        publishTask(setup, task),
        publishTask(setup, task, `${task.idempotencyKey}#dup`),
      ]),
    );

    const results = await eventually(
      async () => {
        const info = await setup.jsm.consumers.info(STREAMS.tasks, 'tool-gateway');
        if (info.num_pending + info.num_ack_pending > 0 || (await unsentCount(setup.db)) > 0)
          return undefined;
        const logged = await storedMessages(setup.jsm, STREAMS.runs, 'dura.run.*');
        const completions = logged.filter(
          (msg) => msg.header?.get('Dura-Event-Type') === 'tool_call_completed',
        );
        return completions.length >= TASKS ? completions : undefined;
      },
      `${TASKS} completions on the log`,
      45_000,
    );

    const [a, b] = replicas.map((replica) => replica.tool) as [CountingTool, CountingTool];
    expect(a.runs() + b.runs()).toBe(TASKS);
    for (const task of tasks) expect(a.runs(task.idempotencyKey) + b.runs(task.idempotencyKey)).toBe(1);
    expect(a.runs()).toBeGreaterThan(0);
    expect(b.runs()).toBeGreaterThan(0);

    const [counts] = await setup.db
      .select({
        total: sql<number>`count(*)::int`,
        succeeded: sql<number>`count(*) filter (where status = 'succeeded' and attempts = 1)::int`,
      })
      .from(effects);
    expect(counts).toEqual({ total: TASKS, succeeded: TASKS });
    const [rows] = await setup.db.select({ total: sql<number>`count(*)::int` }).from(outbox);
    expect(rows?.total).toBe(TASKS);

    const ids = results.map((msg) => msg.header?.get('Nats-Msg-Id'));
    expect(ids).toHaveLength(TASKS);
    expect(new Set(ids)).toEqual(new Set(tasks.map((task) => `${task.idempotencyKey}:result`)));
  });
});
