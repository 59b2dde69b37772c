import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { TASK_VERSION, type ToolTask } from '@dura/contracts';
import { defineTool } from '@dura/tools';
import { runTool } from '../src/run-tool';

const task: ToolTask = {
  v: TASK_VERSION,
  runId: 'run-unit',
  callId: 'call-1',
  step: 1,
  tool: 'test.wait',
  args: {},
  idempotencyKey: 'key-1',
  causationId: 'run-unit@1',
  correlationId: 'run-unit',
};

/** Waits `ms`, or rejects with the signal's reason when it aborts (unless told to ignore it). */
function waitingTool(ms: number, options: { timeoutMs?: number; ignoreSignal?: boolean } = {}) {
  const seen: unknown[] = [];
  const tool = defineTool({
    name: 'test.wait',
    description: 'waits',
    input: z.object({}),
    safety: 'unsafe',
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    execute: (_args, ctx) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve('finished'), ms);
        if (options.ignoreSignal) return;
        ctx.signal.addEventListener('abort', () => {
          seen.push(ctx.signal.reason);
          clearTimeout(timer);
          reject(ctx.signal.reason as Error);
        });
      }),
  });
  return { tool, seen };
}

describe('runTool with a cancellation signal', () => {
  it('aborts the tool and reports a non-retryable `cancelled` failure naming the tool and the reason', async () => {
    const { tool, seen } = waitingTool(10_000);
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(new Error('run run-unit was cancelled: stop')), 20);
    const outcome = await runTool(tool, task, 1, cancel.signal);
    expect(outcome).toMatchObject({
      ok: false,
      error: {
        code: 'cancelled',
        message:
          'run cancelled while test.wait was running; the tool was sent an abort signal (run run-unit was cancelled: stop)',
        retryable: false,
        cancelled: 'while_running',
      },
    });
    expect(seen).toEqual([cancel.signal.reason]);
  });

  it('ends the call at once even when the tool ignores its signal', async () => {
    const { tool } = waitingTool(10_000, { ignoreSignal: true });
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(new Error('cancelled')), 20);
    const started = performance.now();
    const outcome = await runTool(tool, task, 1, cancel.signal);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(outcome.ok === false && outcome.error.code).toBe('cancelled');
  });

  it('does not wait for a call whose cancellation came before it started', async () => {
    const { tool } = waitingTool(10_000, { ignoreSignal: true });
    const outcome = await runTool(tool, task, 1, AbortSignal.abort(new Error('cancelled')));
    expect(outcome.ok === false && outcome.error.code).toBe('cancelled');
  });

  it('keeps a timeout that came first a retryable `timeout`, even when the run is cancelled afterwards', async () => {
    const { tool, seen } = waitingTool(10_000, { timeoutMs: 20 });
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(new Error('cancelled')), 200);
    const outcome = await runTool(tool, task, 1, cancel.signal);
    expect(outcome).toMatchObject({ ok: false, error: { code: 'timeout', retryable: true } });
    expect(outcome.ok === false && outcome.error.cancelled).toBeUndefined();
    expect(seen).toHaveLength(1);
  });

  it('succeeds as before when the run is not cancelled', async () => {
    const { tool } = waitingTool(5);
    expect(await runTool(tool, task, 1, new AbortController().signal)).toMatchObject({
      ok: true,
      result: 'finished',
    });
  });
});

describe('a result the run log could not hold', () => {
  const returning = (result: unknown) =>
    defineTool({
      name: 'test.wait',
      description: 'returns what it is given',
      input: z.object({}),
      safety: 'unsafe',
      execute: () => Promise.resolve(result as never),
    });

  it('is a tool failure, never retried, not a poison event: nested too deep, too wide, or not storable', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    const cases: [unknown, string, RegExp][] = [
      [deep, 'result_over_limits', /deeper than 64 levels/],
      [{ list: Array.from({ length: 100_001 }, () => 0) }, 'result_over_limits', /more than 100000 elements/],
      [{ text: 'a\u0000b' }, 'invalid_result', /text\.? ?.*U\+0000/],
    ];
    for (const [result, code, message] of cases) {
      const outcome = await runTool(returning(result), task, 1);
      expect(outcome).toMatchObject({ ok: false, error: { code, retryable: false, message } });
    }
  });

  it('a thrown error quoting a NUL or a lone surrogate becomes a message a store can keep', async () => {
    const tool = defineTool({
      name: 'test.wait',
      description: 'fails',
      input: z.object({}),
      safety: 'unsafe',
      execute: () => Promise.reject(new Error(`bad byte \u0000 and \ud800 ${'x'.repeat(5_000)}`)),
    });
    const outcome = await runTool(tool, task, 1);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    // eslint-disable-next-line no-control-regex -- U+0000 is what must not be there.
    expect(outcome.error.message).not.toMatch(/\u0000|\ud800/);
    expect(outcome.error.message.length).toBeLessThan(2_100);
  });
});

describe('an error a tool throws', () => {
  const throwing = (err: unknown) =>
    defineTool({
      name: 'test.wait',
      description: 'fails',
      input: z.object({}),
      safety: 'unsafe',
      execute: () => Promise.reject(err as Error),
    });

  it('keeps the code, retryability and delay of a ToolError of another copy of @dura/tools (a project outside this checkout)', async () => {
    // What a class of a second installed copy looks like here: the same shape, another prototype chain.
    class ForeignToolError extends Error {
      constructor(
        readonly code: string,
        message: string,
        readonly retryable: boolean,
        readonly retryAfterMs?: number,
      ) {
        super(message);
      }
    }
    const terminal = await runTool(
      throwing(new ForeignToolError('card_declined', 'declined', false)),
      task,
      1,
    );
    expect(terminal).toMatchObject({ ok: false, error: { code: 'card_declined', retryable: false } });
    const later = await runTool(
      throwing(new ForeignToolError('rate_limited', 'slow down', true, 2_000)),
      task,
      1,
    );
    expect(later).toMatchObject({
      ok: false,
      error: { code: 'rate_limited', retryable: true, retryAfterMs: 2_000 },
    });
  });

  it('is a retryable tool_error when it carries no Dura code (a system error code alone does not count)', async () => {
    const outcome = await runTool(
      throwing(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })),
      task,
      1,
    );
    expect(outcome).toMatchObject({
      ok: false,
      error: { code: 'tool_error', retryable: true, message: 'refused' },
    });
  });
});
