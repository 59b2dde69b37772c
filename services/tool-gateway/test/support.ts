import { eventually, storedMessages } from '@dura/testing';
import type { JetStreamManager } from '@nats-io/jetstream';
import { eq, isNull, sql } from 'drizzle-orm';
import * as z from 'zod';
import {
  DecideTaskSchema,
  STREAMS,
  SUBJECTS,
  TASK_VERSION,
  decodeEvent,
  runSubject,
  timerTaskMsgId,
  toolTaskSubject,
  type JsonObject,
  type RunEvent,
  type TimerTask,
  type ToolTask,
} from '@dura/contracts';
import { idempotencyKey } from '@dura/core';
import type { Db } from '@dura/db';
import { ensureStreams } from '@dura/event-store';
import {
  TEST_STREAM_OPTIONS,
  testConnections,
  testLogger,
  type TestDbConnections,
} from '@dura/service-kit/testing';
import { defineTool, type ToolDefinition, type ToolSafety, type ToolStatus } from '@dura/tools';
import { effects, migrateGateway, outbox, type EffectRow } from '../src/index';
export { eventually, storedMessages };

export { TEST_STREAM_OPTIONS as STREAM_OPTIONS, testLogger };

/** One "replica's worth" of connections: its own NATS connection and its own Postgres pool. */
export type Connections = TestDbConnections;

export function connect(natsUrl: string, databaseUrl: string, name = 'test'): Promise<Connections> {
  return testConnections(natsUrl, name, databaseUrl);
}

/** Connects, migrates the gateway tables and creates the streams. */
export async function prepare(natsUrl: string, databaseUrl: string): Promise<Connections> {
  const conn = await connect(natsUrl, databaseUrl, 'test-setup');
  try {
    await migrateGateway(conn.database);
    await ensureStreams(conn.jsm, TEST_STREAM_OPTIONS);
  } catch (err) {
    await conn.close();
    throw err;
  }
  return conn;
}

/** A tool that counts how often it really ran, per idempotency key. */
export interface CountingTool {
  tool: ToolDefinition;
  runs(key?: string): number;
}

export function countingTool(
  name: string,
  options: {
    safety?: ToolSafety;
    delayMs?: number;
    /** Called on every execution (1-based count for this key); may throw to fail the attempt. */
    behave?: (execution: number) => void;
    status?: (key: string) => ToolStatus;
  } = {},
): CountingTool {
  const counts = new Map<string, number>();
  const tool = defineTool({
    name,
    description: `test tool ${name}`,
    input: z.object({ n: z.number().int() }),
    safety: options.safety ?? 'idempotent',
    timeoutMs: 10_000,
    async execute({ n }, ctx) {
      const execution = (counts.get(ctx.idempotencyKey) ?? 0) + 1;
      counts.set(ctx.idempotencyKey, execution);
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      options.behave?.(execution);
      return { n, doubled: n * 2, attempt: ctx.attempt };
    },
    ...(options.status
      ? { status: (key: string) => Promise.resolve(options.status?.(key) ?? { state: 'unknown' as const }) }
      : {}),
  });
  return {
    tool,
    runs: (key) =>
      key === undefined ? [...counts.values()].reduce((a, b) => a + b, 0) : (counts.get(key) ?? 0),
  };
}

/** A tool that runs until its abort signal fires (or `maxMs` passes), and records what it saw. */
export interface AbortableTool {
  tool: ToolDefinition;
  /** Executions so far, per idempotency key (all keys when omitted). */
  runs(key?: string): number;
  /** The abort reasons the tool observed, in order. */
  readonly aborts: unknown[];
}

export function abortableTool(name: string, maxMs = 20_000): AbortableTool {
  const counts = new Map<string, number>();
  const aborts: unknown[] = [];
  const tool = defineTool({
    name,
    description: `test tool ${name}: waits for its abort signal`,
    input: z.object({ n: z.number().int() }),
    safety: 'unsafe',
    timeoutMs: maxMs,
    async execute({ n }, ctx) {
      counts.set(ctx.idempotencyKey, (counts.get(ctx.idempotencyKey) ?? 0) + 1);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, maxMs + 1_000);
        ctx.signal.addEventListener(
          'abort',
          () => {
            aborts.push(ctx.signal.reason);
            clearTimeout(timer);
            reject(ctx.signal.reason as Error);
          },
          { once: true },
        );
      });
      return { n };
    },
  });
  return {
    tool,
    aborts,
    runs: (key) =>
      key === undefined ? [...counts.values()].reduce((a, b) => a + b, 0) : (counts.get(key) ?? 0),
  };
}

/** A timer task as the planner would publish it. */
export function timerTask(runId: string, waitId: string, dueAt: Date): TimerTask {
  return {
    v: TASK_VERSION,
    runId,
    waitId,
    dueAt: dueAt.toISOString(),
    causationId: `${runId}@wait-${waitId}`,
    correlationId: runId,
    trace: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  };
}

/** Publishes a timer task like the planner does: msg-id `timer:<runId>:<waitId>`, unless `msgID` overrides it. */
export async function publishTimer(
  conn: Connections,
  task: TimerTask,
  msgID = timerTaskMsgId(task.runId, task.waitId),
): Promise<void> {
  await conn.js.publish(SUBJECTS.timerTask, JSON.stringify(task), { msgID });
}

/** A tool task as the planner would dispatch it, with the real idempotency key. */
export function toolTask(runId: string, tool: string, args: JsonObject, step = 1): ToolTask {
  return {
    v: TASK_VERSION,
    runId,
    callId: `call-${step}`,
    step,
    tool,
    args,
    idempotencyKey: idempotencyKey({ runId, step, tool, args }),
    causationId: `${runId}@intent-${step}`,
    correlationId: runId,
  };
}

/** Publishes a task like the planner does: msg-id = idempotency key, unless `msgID` overrides it. */
export async function publishTask(
  conn: Connections,
  task: ToolTask,
  msgID = task.idempotencyKey,
): Promise<void> {
  await conn.js.publish(toolTaskSubject(task.tool), JSON.stringify(task), { msgID });
}

export interface LoggedEvent {
  msgId: string | undefined;
  event: RunEvent;
}

/** The run's log with each event's Nats-Msg-Id. */
export async function runLog(jsm: JetStreamManager, runId: string): Promise<LoggedEvent[]> {
  const messages = await storedMessages(jsm, STREAMS.runs, runSubject(runId));
  return messages.map((msg) => ({
    msgId: msg.header?.get('Nats-Msg-Id') || undefined,
    event: decodeEvent(msg.json(), msg.seq),
  }));
}

export async function decideTasks(jsm: JetStreamManager, runId: string) {
  const messages = await storedMessages(jsm, STREAMS.tasks, SUBJECTS.decideTask);
  return messages
    .map((msg) => ({ msgId: msg.header?.get('Nats-Msg-Id'), task: DecideTaskSchema.parse(msg.json()) }))
    .filter(({ task }) => task.runId === runId);
}

export async function effectRow(db: Db, key: string): Promise<EffectRow | undefined> {
  const [row] = await db.select().from(effects).where(eq(effects.idempotencyKey, key));
  return row;
}

export async function outboxRows(db: Db, runId: string) {
  return db.select().from(outbox).where(eq(outbox.runId, runId)).orderBy(outbox.id);
}

export async function unsentCount(db: Db): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(outbox)
    .where(isNull(outbox.sentAt));
  return row?.n ?? 0;
}

/** Waits until the run's log holds an event with msg-id `msgId`, and every outbox row of the run is sent. */
export async function settledLog(conn: Connections, runId: string, msgId: string): Promise<LoggedEvent[]> {
  return eventually(async () => {
    const rows = await outboxRows(conn.db, runId);
    if (rows.length === 0 || rows.some((row) => row.sentAt === null)) return undefined;
    const log = await runLog(conn.jsm, runId);
    return log.some((entry) => entry.msgId === msgId) ? log : undefined;
  }, `${msgId} on the log of ${runId}`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
