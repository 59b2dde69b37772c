import { describe, expect, it } from 'vitest';
import { fold, initialRunState } from '../src/index';
import { RunLog, given, requestedData, thoughtData } from '../src/testing';

const build = { tool: 'build.image', args: { repo: 'acme/web' } };
const deploy = { tool: 'deploy.service', args: { env: 'staging' } };

/** A started run with one recorded decision for `build` and `deploy`, both intents in the log. */
const withTwoCalls = () => new RunLog().request().start().think([build, deploy]).intents();

describe('evolve: the happy path, given/when/then', () => {
  it('run_requested opens a pending run under the request id', () => {
    const log = new RunLog('run-7');
    given([])
      .when(log.next('run_requested', requestedData('run-7', [build], { ticket: 1 })))
      .then({
        runId: 'run-7',
        status: 'pending',
        correlationId: 'run-7',
        request: { runId: 'run-7', agent: { kind: 'scripted', steps: [build] }, input: { ticket: 1 } },
        lastSeq: 1,
        eventCount: 1,
        createdAt: '2025-01-01T00:00:01.000Z',
      });
  });

  it('run_started makes it running', () => {
    const log = new RunLog().request();
    given(log.events).when(log.next('run_started', {})).then({ status: 'running', lastSeq: 2 });
  });

  it('a thought opens a decision and adds its token usage', () => {
    const log = new RunLog().request().start().think([build]).intents().complete('call-1');
    const calls = [{ callId: 'call-2', ...deploy }];
    given(log.events)
      .when(log.next('thought', thoughtData({ kind: 'tool_calls', calls }, 1)))
      .then({
        decisions: 2,
        openDecision: { seq: log.lastSeq + 1, decision: { kind: 'tool_calls', calls } },
        usage: { inputTokens: 20, outputTokens: 10 },
      });
  });

  it('each intent adds a pending call; the decision stays open until the last intent is in', () => {
    const log = new RunLog().request().start().think([build, deploy]).intents(1);
    expect(fold(log.events)).toMatchObject({ steps: 1, openDecision: { seq: 3 } });
    const full = withTwoCalls();
    given(full.events.slice(0, -1))
      .when(full.events.at(-1)!)
      .then({
        steps: 2,
        openDecision: null,
        calls: [
          {
            callId: 'call-1',
            step: 1,
            status: 'pending',
            attempts: 0,
            idempotencyKey: full.intent('call-1').idempotencyKey,
          },
          {
            callId: 'call-2',
            step: 2,
            tool: 'deploy.service',
            status: 'pending',
            requestedSeq: full.lastSeq,
          },
        ],
      });
  });

  it('an observation resolves its call with the result', () => {
    const log = withTwoCalls();
    const done = log.complete('call-2', { url: 'https://x' }).events.at(-1)!;
    given(log.events.slice(0, -1))
      .when(done)
      .then({
        calls: [
          { status: 'pending' },
          { status: 'completed', attempts: 1, result: { url: 'https://x' }, resolvedSeq: done.seq },
        ],
      });
  });

  it('a retryable failure leaves the call pending for another attempt; the retry then completes it', () => {
    const log = withTwoCalls().fail('call-1', true, 1);
    expect(fold(log.events)).toMatchObject({
      calls: [{ status: 'pending', attempts: 1, error: { code: 'timeout' } }, {}],
    });
    given(log.events)
      .when(log.next('tool_call_completed', { ...observed(log, 'call-1'), attempt: 2 }))
      .then({ calls: [{ status: 'completed', attempts: 2, result: 'ok' }, { status: 'pending' }] });
  });

  it('a terminal failure resolves the call as failed', () => {
    const log = withTwoCalls();
    given(log.events)
      .when(log.fail('call-1', false, 3).events.at(-1)!)
      .then({
        calls: [{ status: 'failed', attempts: 3, error: { code: 'bad_request', retryable: false } }, {}],
      });
  });

  it('a duplicate observation of a resolved call changes nothing but the position', () => {
    const log = withTwoCalls().complete('call-1', 'first');
    const before = fold(log.events);
    const again = log.next('tool_call_completed', {
      ...observed(log, 'call-1'),
      result: 'second',
      deduped: true,
    });
    given(log.events)
      .when(again)
      .then((after) => {
        expect(after).toEqual({
          ...before,
          lastSeq: again.seq,
          eventCount: before.eventCount + 1,
          updatedAt: again.meta.ts,
        });
      });
  });

  it('a signal wait resumes only on the named signal; other signals are recorded', () => {
    const log = new RunLog()
      .request()
      .start()
      .add('wait_requested', { waitId: 'w', kind: 'signal', signal: 'approve' });
    expect(fold(log.events)).toMatchObject({
      status: 'waiting',
      waiting: { waitId: 'w', signal: 'approve' },
    });
    given(log.events)
      .when(log.next('signal_received', { signalId: 's1', name: 'comment' }))
      .then({ status: 'waiting', signals: [{ signalId: 's1', name: 'comment', seq: 4 }] });
    given(log.events)
      .when(log.next('signal_received', { signalId: 's2', name: 'approve', payload: { by: 'ana' } }))
      .then({ status: 'running', waiting: null, signals: [{ name: 'approve', payload: { by: 'ana' } }] });
  });

  it('a timer wait resumes on its own timer only', () => {
    const log = new RunLog()
      .request()
      .start()
      .add('wait_requested', { waitId: 'w1', kind: 'timer', until: 'later' });
    given(log.events)
      .when(log.next('timer_fired', { waitId: 'w0' }))
      .then({ status: 'waiting' });
    given(log.events)
      .when(log.next('timer_fired', { waitId: 'w1' }))
      .then({ status: 'running', waiting: null });
  });

  it('a child wait resumes when that child run ends', () => {
    const log = new RunLog()
      .request()
      .start()
      .add('child_run_requested', { childRunId: 'kid', request: requestedData('kid').request })
      .add('wait_requested', { waitId: 'w', kind: 'child', childRunId: 'kid' });
    const ended = (childRunId: string) => log.next('child_run_completed', { childRunId, status: 'failed' });
    given(log.events).when(ended('other')).then({ status: 'waiting' });
    given(log.events).when(ended('kid')).then({ status: 'running', waiting: null });
  });

  it('run_completed records the output and closes the decision', () => {
    const log = new RunLog()
      .request()
      .start()
      .add('thought', thoughtData({ kind: 'complete', output: 42 }));
    given(log.events)
      .when(log.next('run_completed', { output: 42 }))
      .then({ status: 'completed', output: 42, openDecision: null });
  });

  it('run_failed and run_cancelled end a waiting run and drop the wait', () => {
    const log = new RunLog()
      .request()
      .start()
      .add('wait_requested', { waitId: 'w', kind: 'signal', signal: 'go' });
    const error = { code: 'deadline', message: 'too late' };
    given(log.events)
      .when(log.next('run_failed', { error }))
      .then({ status: 'failed', error, waiting: null });
    given(log.events)
      .when(log.next('run_cancelled', { reason: 'user' }))
      .then({ status: 'cancelled', waiting: null });
  });

  it('a request refused at intake is rejected, with or without its run_requested', () => {
    const error = { code: 'contract_violation', message: 'bad' };
    const log = new RunLog('run-9');
    given([]).when(log.next('run_rejected', { error })).then({ status: 'rejected', runId: 'run-9', error });
    given(log.request().events).when(log.next('run_rejected', { error })).then({ status: 'rejected' });
  });

  it('an observation after the run ended is recorded without reopening it', () => {
    const log = withTwoCalls().complete('call-1').add('run_cancelled', { reason: 'user' });
    given(log.events)
      .when(log.next('tool_call_completed', { ...observed(log, 'call-2'), result: 'late' }))
      .then({
        status: 'cancelled',
        calls: [{ status: 'completed' }, { status: 'completed', result: 'late' }],
      });
  });

  it('snapshot_taken and budget_exceeded only move the position', () => {
    const log = new RunLog().request().start();
    const before = fold(log.events);
    given(log.events)
      .when(log.next('budget_exceeded', { budget: 'steps', limit: 1, used: 2 }))
      .then({ ...before, lastSeq: 3, eventCount: 3, updatedAt: '2025-01-01T00:00:03.000Z' });
    given(log.events)
      .when(log.next('snapshot_taken', { atSeq: 2 }))
      .then({ ...before, lastSeq: 3, eventCount: 3, updatedAt: '2025-01-01T00:00:03.000Z' });
  });

  it('fold of nothing is the empty run, and fold can start from a snapshot', () => {
    expect(fold([])).toEqual(initialRunState());
    const log = withTwoCalls().complete('call-1').complete('call-2');
    expect(fold(log.events.slice(4), fold(log.events.slice(0, 4)))).toEqual(fold(log.events));
  });
});

/** The fields of a completion of `id` as the gateway would report it. */
function observed(log: RunLog, id: string) {
  return {
    callId: id,
    idempotencyKey: log.intent(id).idempotencyKey,
    result: 'ok',
    attempt: 1,
    deduped: false,
    durationMs: 5,
  };
}
