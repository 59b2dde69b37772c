import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { useTestInfra } from '@dura/testing';
import { ToolRegistry } from '@dura/tools';
import { ensureStreams, type StreamOptions } from '@dura/event-store';
import { createToolGateway, effects, migrateGateway, outbox, type ToolGateway } from '../src/index';
import {
  connect,
  countingTool,
  publishTask,
  runLog,
  settledLog,
  sleep,
  testLogger,
  toolTask,
  type Connections,
} from './support';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

// JetStream forgets msg-ids after this window; the effect ledger must not.
const SHORT_WINDOW: StreamOptions = { replicas: 1, duplicateWindowMs: 1000, storage: 'file' };

const infra = useTestInfra();
const counter = countingTool('test.count');
let conn: Connections;
let gateway: ToolGateway | undefined;

beforeAll(async () => {
  conn = await connect(infra().nats.url, infra().db.url);
  await migrateGateway(conn.database);
  await ensureStreams(conn.jsm, SHORT_WINDOW);
  gateway = createToolGateway({
    ...conn,
    tools: new ToolRegistry([counter.tool]),
    log: testLogger('tool-gateway'),
    relayPollMs: 50,
    streams: SHORT_WINDOW,
  });
  await gateway.start();
});

afterAll(async () => {
  await gateway?.stop();
  await conn?.close();
});

describe('a repeat of a key after the broker forgot its msg-id', () => {
  it('is not executed again: the ledger, not the dedupe window, holds the effect', async () => {
    const task = toolTask('run-window', 'test.count', { n: 5 });
    const resultId = `${task.idempotencyKey}:result`;
    await publishTask(conn, task);
    await settledLog(conn, task.runId, resultId);

    await sleep(SHORT_WINDOW.duplicateWindowMs + 300);
    const again = await conn.js.publish('dura.task.tool.test.count', JSON.stringify(task), {
      msgID: task.idempotencyKey,
    });
    expect(again.duplicate).toBe(false); // the broker accepted the repeat: only the ledger stands in its way
    await vi.waitFor(
      async () => {
        const info = await conn.jsm.consumers.info('DURA_TASKS', 'tool-gateway');
        expect(info.num_pending + info.num_ack_pending).toBe(0);
        const [row] = await conn.db.select().from(outbox).where(eq(outbox.runId, task.runId));
        expect(row?.sentAt).not.toBeNull();
      },
      { timeout: 10_000, interval: 50 },
    );

    expect(counter.runs(task.idempotencyKey)).toBe(1);
    expect(await conn.db.select().from(effects).where(eq(effects.runId, task.runId))).toHaveLength(1);
    expect(await conn.db.select().from(outbox).where(eq(outbox.runId, task.runId))).toHaveLength(1);

    // Past the window the relay's re-send of the recorded observation is not dropped by the broker; any copy
    // is the same fact under the same id, which the fold treats as a no-op (see core's evolve tests).
    const log = await runLog(conn.jsm, task.runId);
    const completions = log.filter(({ event }) => event.type === 'tool_call_completed');
    expect(completions.length).toBeGreaterThanOrEqual(1);
    for (const { msgId, event } of completions) {
      expect(msgId).toBe(resultId);
      expect(event.data).toEqual(completions[0]?.event.data);
    }
  });
});
