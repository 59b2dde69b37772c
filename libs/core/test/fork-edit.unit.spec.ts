import { describe, expect, it } from 'vitest';
import type { ForkEdit, NewEvent, RunEvent } from '@dura/contracts';
import { fold, jsonHash, nextAction, planFork, type ForkPlan } from '../src/index';
import { RunLog } from '../src/testing';

const TS = '2025-06-01T12:00:00.000Z';
const quote = (item: string) => ({ tool: 'shop.quote', args: { item } });

/** A run that asks for a quote, then (from the quote) a second one, then completes; on a shared stream. */
function quotedRun(): RunEvent[] {
  const log = new RunLog('src', [1, 0, 2]).request([quote('a'), quote('b')], { item: 'a' });
  log.start();
  log
    .think([quote('a')])
    .intents()
    .complete('call-1', { price: 100 });
  log
    .think([quote('b')])
    .intents()
    .complete('call-2', { price: 250 });
  return log.finish({ total: 350 }).events;
}

function events(plan: ForkPlan): NewEvent[] {
  if (!plan.ok) throw new Error(`expected a fork plan, got ${plan.problem.code}: ${plan.problem.message}`);
  return plan.events;
}

function problem(plan: ForkPlan): { code: string; message: string; retryable: boolean } {
  if (plan.ok) throw new Error('expected the fork to be refused');
  return plan.problem;
}

const seqOf = (log: RunEvent[], type: RunEvent['type'], callId?: string): number =>
  log.find(
    (e) =>
      e.type === type &&
      (callId === undefined || ('callId' in e.data && (e.data as { callId: string }).callId === callId)),
  )!.seq;

const fork = (source: RunEvent[], atSeq: number, edit: ForkEdit): ForkPlan =>
  planFork({ source, atSeq, runId: 'fork-1', ts: TS, edit });

describe('planFork with an edited tool result', () => {
  const source = quotedRun();
  const at = seqOf(source, 'tool_call_completed', 'call-1');
  const edit: ForkEdit = { toolResult: { callId: 'call-1', output: { price: 90 } }, by: 'alice' };

  it('copies the observation with the edited output, marked with who edited and the hash of the original', () => {
    const forked = events(fork(source, at, edit));
    const original = source.find((e) => e.seq === at)!;
    const copy = forked.find((e) => e.type === 'tool_call_completed')!;
    expect(copy.data).toEqual({
      ...original.data,
      result: { price: 90 },
      edited: { by: 'alice', sourceRunId: 'src', sourceSeq: at, originalSha256: jsonHash({ price: 100 }) },
    });
    expect(forked[0]?.data).toMatchObject({
      forkOf: {
        runId: 'src',
        atSeq: at,
        edited: {
          by: 'alice',
          toolResult: { callId: 'call-1', sourceSeq: at, originalSha256: jsonHash({ price: 100 }) },
        },
      },
    });
  });

  it('keeps the call completed under its source key: the fork decides next and never runs the call again', () => {
    const forked = events(fork(source, at, edit)).map((e, i): RunEvent => ({ ...e, seq: 500 + i }));
    const state = fold(forked);
    const call = state.calls.find((c) => c.callId === 'call-1');
    const intent = source.find((e) => e.type === 'tool_call_requested' && e.data.callId === 'call-1');
    expect(call).toMatchObject({
      status: 'completed',
      result: { price: 90 },
      idempotencyKey: intent?.type === 'tool_call_requested' ? intent.data.idempotencyKey : 'missing',
    });
    expect(nextAction(state)).toEqual({ kind: 'decide' });
  });

  it('edits the outcome a fork copies for a call still open at the fork point', () => {
    const intentSeq = seqOf(source, 'tool_call_requested', 'call-1');
    const forked = events(fork(source, intentSeq, edit));
    const copy = forked.find((e) => e.type === 'tool_call_completed');
    expect(copy?.data).toMatchObject({ result: { price: 90 }, edited: { sourceSeq: at } });
  });

  it('records the hash a payload reference names when the original result was too large for the event', () => {
    const big = source.map<RunEvent>((e) =>
      e.seq === at && e.type === 'tool_call_completed'
        ? {
            ...e,
            data: {
              ...e.data,
              result: null,
              resultRef: { uri: 'obj://x', sha256: 'ab'.repeat(32), size: 9e6 },
            },
          }
        : e,
    );
    const copy = events(fork(big, at, edit)).find((e) => e.type === 'tool_call_completed')!;
    expect(copy.data).not.toHaveProperty('resultRef');
    expect(copy.data).toMatchObject({ result: { price: 90 }, edited: { originalSha256: 'ab'.repeat(32) } });
  });

  it('refuses a result the run already decided from, naming the decision and where to fork', () => {
    const later = seqOf(source, 'tool_call_completed', 'call-2');
    const refused = problem(fork(source, later, edit));
    expect(refused).toMatchObject({ code: 'fork_edit_invalid', retryable: false });
    expect(refused.message).toContain(`fork at seq ${at}`);
    expect(refused.message).toMatch(/decided at seq \d+ \(thought\) from the recorded result of call call-1/);
  });

  it('refuses an unknown call, listing the calls there are', () => {
    const refused = problem(fork(source, at, { ...edit, toolResult: { callId: 'call-9', output: 1 } }));
    expect(refused.code).toBe('fork_edit_invalid');
    expect(refused.message).toContain('has no call "call-9"');
    expect(refused.message).toContain('(its calls there: call-1)');
  });

  it('refuses a failed call: only a completed call has a result to edit', () => {
    const log = new RunLog('src-f').request([quote('a')]);
    log.start();
    log
      .think([quote('a')])
      .intents()
      .fail('call-1', false);
    const refused = problem(fork(log.events, log.lastSeq, edit));
    expect(refused.message).toContain('call call-1 (shop.quote) failed (bad_request: tool failed)');
  });

  it('refuses a control tool call, whose result is the runtime’s own record', () => {
    const log = new RunLog('src-c').request([{ tool: 'dura.sleep', args: { seconds: 1 } }]);
    log.start();
    log
      .think([{ tool: 'dura.sleep', args: { seconds: 1 } }])
      .intents()
      .complete('call-1', { slept: 1 });
    expect(problem(fork(log.events, log.lastSeq, edit)).message).toContain('dura.sleep, a control tool');
  });

  it('refuses a sealed secret copied into the edit', () => {
    const sealed = { $secret: { kid: 'k1', iv: 'aXY=', ct: 'Y3Q=', tag: 'dGFn' } };
    const refused = problem(
      fork(source, at, { ...edit, toolResult: { callId: 'call-1', output: { card: sealed } } }),
    );
    expect(refused.message).toContain('holds a sealed secret');
  });
});

describe('planFork with an edited input', () => {
  const source = quotedRun();
  const requestedSeq = source[0]!.seq;

  it('at the run request, carries the edited input and records the hash of the original', () => {
    const forked = events(fork(source, requestedSeq, { input: { item: 'z' }, by: 'bob' }));
    expect(forked).toHaveLength(1);
    expect(forked[0]?.data).toMatchObject({
      request: { runId: 'fork-1', input: { item: 'z' } },
      forkOf: {
        runId: 'src',
        atSeq: requestedSeq,
        edited: { by: 'bob', input: { originalSha256: jsonHash({ item: 'a' }) } },
      },
    });
  });

  it('records no original hash when the source had no input', () => {
    const log = new RunLog('src-n').request([quote('a')]);
    const forked = events(fork(log.events, log.lastSeq, { input: 7, by: 'bob' }));
    expect(forked[0]?.data).toMatchObject({
      request: { input: 7 },
      forkOf: { edited: { by: 'bob', input: {} } },
    });
  });

  it('is refused after the first decision, which was made from the original input', () => {
    const at = seqOf(source, 'thought');
    const refused = problem(fork(source, at, { input: { item: 'z' }, by: 'bob' }));
    expect(refused.code).toBe('fork_edit_invalid');
    expect(refused.message).toContain(`decided at seq ${at} (thought) from its recorded input`);
    expect(refused.message).toContain(`fork at seq ${requestedSeq}`);
  });

  it('together with a result edit, applies both or neither', () => {
    const at = seqOf(source, 'tool_call_completed', 'call-1');
    const both = { input: { item: 'z' }, toolResult: { callId: 'call-1', output: 0 }, by: 'bob' };
    expect(problem(fork(source, at, both)).message).toContain('recorded input');
  });
});
