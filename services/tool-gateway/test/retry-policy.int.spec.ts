import { describe, expect, it, vi } from 'vitest';
import { useTestInfra } from '@dura/testing';
import { ToolError } from '@dura/tools';
import { countingTool, publishTask, settledLog, toolTask } from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const declined = countingTool('test.declined', {
  behave: () => {
    throw new ToolError('card_declined', 'the card was declined', { retryable: true });
  },
});
declined.tool.retry = { attempts: 2, initialDelayMs: 10, onExhausted: 'fail_run' };
const picky = countingTool('test.picky', {
  behave: () => {
    throw new ToolError('quota', 'quota exhausted', { retryable: true });
  },
});
picky.tool.retry = { attempts: 5, initialDelayMs: 10, retryOn: (error) => error.code !== 'quota' };
const sys = useGateway(infra, [declined.tool, picky.tool], { maxAttempts: 4 });

describe("a tool's retry policy", () => {
  it('sets its own attempts, and on exhaustion marks the final failure as failing the run', async () => {
    const task = toolTask('run-declined', 'test.declined', { n: 1 });
    await publishTask(sys.setup, task);
    const log = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);
    expect(declined.runs(task.idempotencyKey)).toBe(2);
    const failures = log.flatMap(({ event }) => (event.type === 'tool_call_failed' ? [event.data] : []));
    expect(failures.map((f) => [f.attempt, f.retryable, f.failRun ?? false])).toEqual([
      [1, true, false],
      [2, false, true],
    ]);
  });

  it('retries only the errors it names', async () => {
    const task = toolTask('run-picky', 'test.picky', { n: 1 });
    await publishTask(sys.setup, task);
    const log = await settledLog(sys.setup, task.runId, `${task.idempotencyKey}:result`);
    expect(picky.runs(task.idempotencyKey)).toBe(1);
    expect(log.map(({ event }) => event.type)).toEqual(['tool_call_failed']);
  });
});
