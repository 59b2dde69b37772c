import { describe, expect, it, vi } from 'vitest';
import { DeadLetterSchema, STREAMS } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { ToolError } from '@dura/tools';
import {
  countingTool,
  effectRow,
  eventually,
  outboxRows,
  publishTask,
  runLog,
  settledLog,
  storedMessages,
  toolTask,
} from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const MAX_ATTEMPTS = 3;
const infra = useTestInfra();
const flaky = countingTool('test.flaky', {
  behave: () => {
    throw new ToolError('upstream_busy', 'the upstream answered 503', { retryable: true });
  },
});
const recovering = countingTool('test.recovering', {
  behave: (execution) => {
    if (execution === 1) throw new Error('connection reset');
  },
});
const strict = countingTool('test.strict');
const sys = useGateway(infra, [flaky.tool, recovering.tool, strict.tool], { maxAttempts: MAX_ATTEMPTS });

describe('retryable tool errors', () => {
  it('are retried up to maxAttempts, one retryable failure per attempt, then fail for good', async () => {
    const task = toolTask('run-flaky', 'test.flaky', { n: 1 });
    await publishTask(sys.setup, task);
    const log = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);

    expect(flaky.runs(task.idempotencyKey)).toBe(MAX_ATTEMPTS);
    expect(
      log.map(({ msgId, event }) => [
        msgId,
        event.type,
        event.type === 'tool_call_failed' && event.data.retryable,
      ]),
    ).toEqual([
      [`${task.idempotencyKey}:attempt-1`, 'tool_call_failed', true],
      [`${task.idempotencyKey}:attempt-2`, 'tool_call_failed', true],
      [`${task.idempotencyKey}:result`, 'tool_call_failed', false],
    ]);
    for (const [i, { event }] of log.entries()) {
      expect(event.data).toMatchObject({
        attempt: i + 1,
        error: { code: 'upstream_busy', message: 'the upstream answered 503' },
      });
    }
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'failed',
      attempts: MAX_ATTEMPTS,
    });
    expect(await outboxRows(sys.setup.db, task.runId)).toHaveLength(MAX_ATTEMPTS);
  }, 30_000);

  it('record the failed attempt and then the success when a retry works', async () => {
    const task = toolTask('run-recovering', 'test.recovering', { n: 7 });
    await publishTask(sys.setup, task);
    const log = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);

    expect(recovering.runs(task.idempotencyKey)).toBe(2);
    expect(log.map(({ event }) => event.type)).toEqual(['tool_call_failed', 'tool_call_completed']);
    expect(log[0]?.event.data).toMatchObject({
      attempt: 1,
      retryable: true,
      error: { code: 'tool_error', message: 'connection reset' },
    });
    expect(log[1]?.event.data).toMatchObject({ attempt: 2, result: { n: 7, doubled: 14, attempt: 2 } });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'succeeded',
      attempts: 2,
    });
  });
});

describe('bad tasks', () => {
  it('fail with invalid_args, without running the tool, when the arguments do not match its schema', async () => {
    const task = toolTask('run-bad-args', 'test.strict', { n: 'not a number' });
    await publishTask(sys.setup, task);
    const [entry, ...rest] = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);

    expect(rest).toEqual([]);
    expect(strict.runs()).toBe(0);
    expect(entry?.event).toMatchObject({
      type: 'tool_call_failed',
      data: {
        callId: 'call-1',
        error: { code: 'invalid_args', retryable: false },
        retryable: false,
        attempt: 1,
      },
    });
    expect(entry?.event.type === 'tool_call_failed' && entry.event.data.error.message).toMatch(
      /invalid arguments for test\.strict: n:/,
    );
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'failed',
      error: { code: 'invalid_args' },
    });
  });

  it('for a tool this gateway does not have end in an unknown_tool failure observation', async () => {
    const task = toolTask('run-unknown-tool', 'test.nowhere', { n: 1 });
    await publishTask(sys.setup, task);
    const [entry, ...rest] = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);

    expect(rest).toEqual([]);
    expect(entry?.event).toMatchObject({
      type: 'tool_call_failed',
      data: {
        idempotencyKey: task.idempotencyKey,
        error: { code: 'unknown_tool', retryable: false },
        retryable: false,
      },
    });
    expect(entry?.event.type === 'tool_call_failed' && entry.event.data.error.message).toContain(
      'test.flaky',
    );
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toBeUndefined();
  });

  it('that are not JSON, or not tool tasks, are dead-lettered with the reason and do not block the next', async () => {
    await sys.setup.js.publish('dura.task.tool.test.strict', 'this is {not json', { msgID: 'garbage-1' });
    await sys.setup.js.publish('dura.task.tool.test.strict', JSON.stringify({ v: 1, runId: 'x y' }), {
      msgID: 'garbage-2',
    });
    const next = toolTask('run-after-garbage', 'test.strict', { n: 2 });
    await publishTask(sys.setup, next);

    const letters = await eventually(async () => {
      const found = await storedMessages(sys.setup.jsm, STREAMS.deadLetters, 'dura.dlq.tool-tasks');
      return found.length >= 2 ? found.map((msg) => DeadLetterSchema.parse(msg.json())) : undefined;
    }, 'two dead letters on dura.dlq.tool-tasks');
    expect(letters).toHaveLength(2);
    expect(letters[0]).toMatchObject({
      source: 'tool-tasks',
      subject: 'dura.task.tool.test.strict',
      payload: 'this is {not json',
      payloadEncoding: 'utf8',
      error: { code: 'contract_violation' },
    });
    expect(letters[0]?.error.message).toMatch(/not valid JSON/);
    expect(letters[1]).toMatchObject({
      error: { code: 'contract_violation' },
      payload: JSON.stringify({ v: 1, runId: 'x y' }),
    });
    expect(letters[1]?.issues?.join('\n')).toMatch(/runId/);

    await settledLog(sys.setup, next.runId, `${next.idempotencyKey}:result`);
    expect(strict.runs(next.idempotencyKey)).toBe(1);
    expect((await runLog(sys.setup.jsm, next.runId))[0]?.event.type).toBe('tool_call_completed');
    const info = await sys.setup.jsm.consumers.info('DURA_TASKS', 'tool-gateway');
    expect(info.num_pending + info.num_ack_pending).toBe(0);
  });

  it('published on another tool’s subject are dead-lettered, and neither tool runs', async () => {
    const task = toolTask('run-wrong-subject', 'test.strict', { n: 3 });
    const ack = await sys.setup.js.publish('dura.task.tool.test.flaky', JSON.stringify(task), {
      msgID: 'wrong-subject-1',
    });

    const letter = await eventually(async () => {
      const found = await storedMessages(sys.setup.jsm, STREAMS.deadLetters, 'dura.dlq.tool-tasks');
      return found.map((msg) => DeadLetterSchema.parse(msg.json())).find((l) => l.streamSeq === ack.seq);
    }, 'the dead letter of the task on the wrong subject');
    expect(letter).toMatchObject({
      subject: 'dura.task.tool.test.flaky',
      deliveries: 1,
      error: { code: 'contract_violation' },
    });
    expect(letter.error.message).toMatch(
      /tool task for test\.strict was published on dura\.task\.tool\.test\.flaky/,
    );
    expect(strict.runs(task.idempotencyKey)).toBe(0);
    expect(flaky.runs(task.idempotencyKey)).toBe(0);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toBeUndefined();
  });
});
