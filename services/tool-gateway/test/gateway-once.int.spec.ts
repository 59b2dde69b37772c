import { describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { useTestInfra } from '@dura/testing';

import { effects, outbox } from '../src/index';
import {
  countingTool,
  decideTasks,
  effectRow,
  outboxRows,
  publishTask,
  runLog,
  settledLog,
  sleep,
  toolTask,
} from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const counter = countingTool('test.count');
const sys = useGateway(infra, [counter.tool]);

describe('a tool task', () => {
  const task = toolTask('run-once', 'test.count', { n: 21 });
  const resultId = `${task.idempotencyKey}:result`;

  it('runs the tool once, records one effect and one outbox row, and the relay appends the observation', async () => {
    await publishTask(sys.setup, task);
    const log = await settledLog(sys.setup, task.runId, resultId);

    expect(counter.runs(task.idempotencyKey)).toBe(1);
    const row = await effectRow(sys.setup.db, task.idempotencyKey);
    expect(row).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      runId: task.runId,
      callId: 'call-1',
      step: 1,
      tool: 'test.count',
    });
    expect(row?.result).toEqual({ n: 21, doubled: 42, attempt: 1 });

    const rows = await outboxRows(sys.setup.db, task.runId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ msgId: resultId, subject: `dura.run.${task.runId}` });
    expect(rows[0]?.sentAt).toBeInstanceOf(Date);

    expect(log).toHaveLength(1);
    const [{ msgId, event }] = log as [(typeof log)[number]];
    expect(msgId).toBe(resultId);
    expect(event).toMatchObject({
      type: 'tool_call_completed',
      data: {
        callId: 'call-1',
        idempotencyKey: task.idempotencyKey,
        result: { n: 21, doubled: 42, attempt: 1 },
        attempt: 1,
        deduped: false,
      },
      meta: { id: resultId, runId: task.runId, causationId: task.causationId, correlationId: task.runId },
    });
  });

  it('nudges the planner with a decide task for the observation', async () => {
    const [observation] = await runLog(sys.setup.jsm, task.runId);
    const decides = await decideTasks(sys.setup.jsm, task.runId);
    expect(decides).toEqual([
      {
        msgId: `${task.runId}@${observation?.event.seq}`,
        task: { v: 1, runId: task.runId, afterSeq: observation?.event.seq, reason: 'observation' },
      },
    ]);
  });

  it('does not run the tool again for a repeat of the key, and the log keeps one observation', async () => {
    const firstSent = (await outboxRows(sys.setup.db, task.runId))[0]?.sentAt?.getTime() ?? 0;
    // A different msg-id, so JetStream's dedupe of the task itself does not hide the repeat from the sys.gateway.
    await publishTask(sys.setup, task, `${task.idempotencyKey}#again`);
    await publishTask(sys.setup, task, `${task.idempotencyKey}#third`);
    await vi.waitFor(
      async () => {
        const [row] = await outboxRows(sys.setup.db, task.runId);
        // A repeat re-queues the recorded observation (sent_at reset) and the relay sends it again.
        expect(row?.sentAt?.getTime()).toBeGreaterThan(firstSent);
        const info = await sys.setup.jsm.consumers.info('DURA_TASKS', 'tool-gateway');
        expect(info.num_pending + info.num_ack_pending).toBe(0);
      },
      { timeout: 10_000, interval: 50 },
    );
    await sleep(300); // give a wrongly re-run tool time to show up

    expect(counter.runs(task.idempotencyKey)).toBe(1);
    expect(await sys.setup.db.select().from(effects).where(eq(effects.runId, task.runId))).toHaveLength(1);
    expect(await sys.setup.db.select().from(outbox).where(eq(outbox.runId, task.runId))).toHaveLength(1);
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.filter(({ event }) => event.type === 'tool_call_completed')).toHaveLength(1);
    expect((await effectRow(sys.setup.db, task.idempotencyKey))?.attempts).toBe(1);
  });

  it('drops a re-published task with the same msg-id at the broker', async () => {
    const again = toolTask('run-once-dup', 'test.count', { n: 1 });
    const first = await sys.setup.js.publish('dura.task.tool.test.count', JSON.stringify(again), {
      msgID: again.idempotencyKey,
    });
    const second = await sys.setup.js.publish('dura.task.tool.test.count', JSON.stringify(again), {
      msgID: again.idempotencyKey,
    });
    expect(second).toMatchObject({ duplicate: true, seq: first.seq });
    await settledLog(sys.setup, again.runId, `${again.idempotencyKey}:result`);
    expect(counter.runs(again.idempotencyKey)).toBe(1);
  });
});
