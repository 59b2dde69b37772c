import { describe, expect, it, vi } from 'vitest';
import { Kvm, type KV } from '@nats-io/kv';
import { BUCKETS } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import {
  abortableTool,
  effectRow,
  eventually,
  outboxRows,
  publishTask,
  settledLog,
  sleep,
  toolTask,
  type Connections,
} from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const slow = abortableTool('test.slow', 15_000);
const sys = useGateway(infra, [slow.tool]);

async function cancel(conn: Connections, runId: string, reason: string): Promise<void> {
  const kv: KV = await new Kvm(conn.js).open(BUCKETS.cancellations);
  await kv.put(runId, JSON.stringify({ reason, ts: new Date().toISOString() }));
}

describe('cancelling a run', () => {
  it('aborts its call that is running, records `cancelled`, and leaves other runs’ calls alone', async () => {
    const doomed = toolTask('run-cancel-live', 'test.slow', { n: 1 });
    const other = toolTask('run-cancel-other', 'test.slow', { n: 2 });
    await publishTask(sys.setup, doomed);
    await publishTask(sys.setup, other);
    await eventually(
      () =>
        Promise.resolve(
          slow.runs(doomed.idempotencyKey) + slow.runs(other.idempotencyKey) === 2 || undefined,
        ),
      'both slow calls running',
    );

    const cancelledAt = Date.now();
    await cancel(sys.setup, doomed.runId, 'operator asked');
    const log = await settledLog(sys.setup, doomed.runId, `${doomed.idempotencyKey}:result`);
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);

    expect(slow.aborts).toHaveLength(1);
    expect(slow.aborts[0]).toMatchObject({
      code: 'cancelled',
      runId: doomed.runId,
      reason: 'operator asked',
    });
    expect(log.map(({ event }) => event.type)).toEqual(['tool_call_failed']);
    const failed = log[0]!.event;
    expect(failed.type === 'tool_call_failed' && failed.data).toEqual({
      callId: doomed.callId,
      idempotencyKey: doomed.idempotencyKey,
      attempt: 1,
      retryable: false,
      error: {
        code: 'cancelled',
        message:
          'run cancelled while test.slow was running; the tool was sent an abort signal ' +
          '(run run-cancel-live was cancelled: operator asked)',
        retryable: false,
      },
    });
    expect(await effectRow(sys.setup.db, doomed.idempotencyKey)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { code: 'cancelled' },
    });

    // Not retried, and the other run's call is still running.
    await sleep(1_000);
    expect(slow.runs(doomed.idempotencyKey)).toBe(1);
    expect(await outboxRows(sys.setup.db, other.runId)).toEqual([]);
    expect(slow.aborts).toHaveLength(1);

    await cancel(sys.setup, other.runId, 'done testing');
    const otherLog = await settledLog(sys.setup, other.runId, `${other.idempotencyKey}:result`);
    expect(otherLog[0]?.event.data).toMatchObject({ error: { code: 'cancelled' } });
    expect(slow.aborts).toHaveLength(2);
  });

  it('never starts the effect of a call whose run is already cancelled, and records `run_cancelled`', async () => {
    const task = toolTask('run-cancel-before', 'test.slow', { n: 3 });
    await cancel(sys.setup, task.runId, 'budget spent');
    await publishTask(sys.setup, task);

    const log = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);
    expect(slow.runs(task.idempotencyKey)).toBe(0);
    expect(log.map(({ event }) => event.type)).toEqual(['tool_call_failed']);
    expect(log[0]!.event.data).toMatchObject({
      retryable: false,
      error: {
        code: 'run_cancelled',
        message:
          'run run-cancel-before was cancelled (budget spent) before test.slow started; the effect did not run',
        retryable: false,
      },
    });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'failed',
      error: { code: 'run_cancelled' },
    });

    // A redelivered task is answered from the ledger: still no effect.
    await publishTask(sys.setup, task, `${task.idempotencyKey}#again`);
    await sleep(1_000);
    expect(slow.runs(task.idempotencyKey)).toBe(0);
  });

  it('aborts a call run in place (a worker’s drive, which read the log itself instead of the bucket)', async () => {
    const task = toolTask('run-cancel-in-place', 'test.slow', { n: 4 });
    const running = sys.gateway.local.run(task);
    await eventually(
      () => Promise.resolve(slow.runs(task.idempotencyKey) === 1 || undefined),
      'the call running in place',
    );

    await cancel(sys.setup, task.runId, 'stop in place');
    const outcome = await running;

    expect(slow.aborts.at(-1)).toMatchObject({
      code: 'cancelled',
      runId: task.runId,
      reason: 'stop in place',
    });
    const log = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);
    expect(log.map(({ event }) => event.type)).toEqual(['tool_call_failed']);
    expect(outcome.seq).toBe(log[0]?.event.seq);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'failed',
      error: { code: 'cancelled' },
    });
  });

  it('never starts a call run in place whose run’s cancellation the watcher already delivered', async () => {
    const task = toolTask('run-cancel-in-place-before', 'test.slow', { n: 5 });
    await cancel(sys.setup, task.runId, 'marked before the call');
    // Delivered: a call of the run that is running now is aborted at once, so one that starts after it is
    // the case under test (no bucket read, only what the watcher delivered).
    await sys.gateway.local.run(toolTask(task.runId, 'test.slow', { n: 6 }, 2));

    const outcome = await sys.gateway.local.run(task);
    expect(slow.runs(task.idempotencyKey)).toBe(0);
    const log = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);
    const result = log.find((entry) => entry.msgId === `${task.idempotencyKey}:result`);
    expect(outcome.seq).toBe(result?.event.seq);
    expect(result?.event.data).toMatchObject({
      callId: task.callId,
      error: {
        code: 'run_cancelled',
        message: `run ${task.runId} was cancelled (marked before the call) before test.slow started; the effect did not run`,
      },
    });
  });

  it('runs on a cancellations bucket the gateway created: history 1, the streams’ replicas', async () => {
    const info = await sys.setup.jsm.streams.info(`KV_${BUCKETS.cancellations}`);
    expect(info.config).toMatchObject({ max_msgs_per_subject: 1, num_replicas: 1 });
  });
});
