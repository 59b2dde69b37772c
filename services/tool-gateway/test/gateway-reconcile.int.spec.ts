import { describe, expect, it, vi } from 'vitest';
import type { ToolTask } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';

import { effects } from '../src/index';
import { countingTool, effectRow, outboxRows, publishTask, settledLog, toolTask } from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const statusChecks: string[] = [];
const checked = countingTool('test.checked', {
  safety: 'unsafe',
  status: (key) => {
    statusChecks.push(key);
    return key.startsWith('run-status-failed')
      ? { state: 'failed', error: { code: 'card_declined', message: 'the remote system refused it' } }
      : { state: 'succeeded', result: { from: 'status check', key } };
  },
});
const idempotent = countingTool('test.idempotent', { safety: 'idempotent' });
const unsafe = countingTool('test.unsafe', { safety: 'unsafe' });
const sys = useGateway(infra, [checked.tool, idempotent.tool, unsafe.tool]);

/** What a replica that died mid-call leaves behind: a `started` row whose lease ran out. */
async function orphan(task: ToolTask): Promise<void> {
  const past = new Date(Date.now() - 60_000);
  await sys.setup.db.insert(effects).values({
    idempotencyKey: task.idempotencyKey,
    runId: task.runId,
    callId: task.callId,
    step: task.step,
    tool: task.tool,
    args: task.args,
    status: 'started',
    attempts: 1,
    leaseUntil: new Date(past.getTime() + 1000),
    startedAt: past,
  });
}

/** Orphans the task's key, re-delivers the task, and returns the one observation that ends up on the log. */
async function reconcile(task: ToolTask) {
  await orphan(task);
  await publishTask(sys.setup, task);
  const log = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);
  expect(log).toHaveLength(1);
  expect(await outboxRows(sys.setup.db, task.runId)).toHaveLength(1);
  return log[0]!.event;
}

describe('a started call whose lease expired', () => {
  it('is settled through the tool status check when the tool has one, without running it', async () => {
    const task = toolTask('run-status-ok', 'test.checked', { n: 1 });
    const event = await reconcile(task);

    expect(statusChecks).toContain(task.idempotencyKey);
    expect(checked.runs(task.idempotencyKey)).toBe(0);
    expect(event).toMatchObject({
      type: 'tool_call_completed',
      data: {
        idempotencyKey: task.idempotencyKey,
        result: { from: 'status check', key: task.idempotencyKey },
        attempt: 1,
      },
    });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      result: { from: 'status check', key: task.idempotencyKey },
    });
  });

  it('records the failure the status check reports, without running the tool', async () => {
    const task = toolTask('run-status-failed', 'test.checked', { n: 2 });
    const event = await reconcile(task);

    expect(checked.runs(task.idempotencyKey)).toBe(0);
    expect(event).toMatchObject({
      type: 'tool_call_failed',
      data: { error: { code: 'card_declined', retryable: false }, retryable: false, attempt: 1 },
    });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'failed',
      error: { code: 'card_declined' },
    });
  });

  it('is run again when the tool is idempotent and has no status check', async () => {
    const task = toolTask('run-idempotent', 'test.idempotent', { n: 3 });
    const event = await reconcile(task);

    expect(idempotent.runs(task.idempotencyKey)).toBe(1);
    expect(event).toMatchObject({
      type: 'tool_call_completed',
      data: { result: { n: 3, doubled: 6, attempt: 2 }, attempt: 2 },
    });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'succeeded',
      attempts: 2,
    });
  });

  it('is recorded as failed with outcome_unknown, never run again, when the tool is unsafe', async () => {
    const task = toolTask('run-unsafe', 'test.unsafe', { n: 4 });
    const event = await reconcile(task);

    expect(unsafe.runs(task.idempotencyKey)).toBe(0);
    expect(event).toMatchObject({
      type: 'tool_call_failed',
      data: { error: { code: 'outcome_unknown', retryable: false }, retryable: false, attempt: 1 },
    });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'outcome_unknown' },
    });
  });

  it('stays settled: a later repeat of a reconciled key runs nothing', async () => {
    const task = toolTask('run-unsafe', 'test.unsafe', { n: 4 });
    await publishTask(sys.setup, task, `${task.idempotencyKey}#later`);
    await vi.waitFor(
      async () => {
        const info = await sys.setup.jsm.consumers.info('DURA_TASKS', 'tool-gateway');
        expect(info.num_pending + info.num_ack_pending).toBe(0);
        expect((await outboxRows(sys.setup.db, task.runId))[0]?.sentAt).not.toBeNull();
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(unsafe.runs()).toBe(0);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'failed',
      attempts: 1,
    });
  });
});
