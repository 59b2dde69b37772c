import { describe, expect, it } from 'vitest';
import { DuraError, type RunEvent } from '@dura/contracts';
import { fold, InvalidTransition } from '../src/index';
import { RunLog, given, requestedData, runEvent, thoughtData } from '../src/testing';

const build = { tool: 'build.image', args: { repo: 'acme/web' } };
const deploy = { tool: 'deploy.service', args: { env: 'staging' } };
const error = { code: 'boom', message: 'boom' };

const requested = () => new RunLog().request();
const running = () => requested().start();
const pendingCall = () => running().think([build]).intents();
const halfRecorded = () => running().think([build, deploy]).intents(1);
const completed = () => pendingCall().complete('call-1').finish('done');

interface Case {
  name: string;
  history: RunLog;
  event: (log: RunLog) => RunEvent;
  from: string;
}

const cases: Case[] = [
  {
    name: 'a run_requested whose request names another run',
    history: new RunLog(),
    event: (log) => log.next('run_requested', requestedData('run-other')),
    from: 'none',
  },
  {
    name: 'a thought that reuses a call id already in the log',
    history: pendingCall().complete('call-1'),
    event: (log) =>
      log.next(
        'thought',
        thoughtData({ kind: 'tool_calls', calls: [{ callId: 'call-1', tool: 'build.image', args: {} }] }),
      ),
    from: 'running',
  },
  {
    name: 'a thought that names one call id twice',
    history: running(),
    event: (log) =>
      log.next(
        'thought',
        thoughtData({
          kind: 'tool_calls',
          calls: [
            { callId: 'call-1', tool: 'build.image', args: {} },
            { callId: 'call-1', tool: 'deploy.service', args: {} },
          ],
        }),
      ),
    from: 'running',
  },
  {
    name: 'run_completed before run_started',
    history: requested(),
    event: (log) => log.next('run_completed', {}),
    from: 'pending',
  },
  {
    name: 'run_started twice',
    history: running(),
    event: (log) => log.next('run_started', {}),
    from: 'running',
  },
  {
    name: 'run_requested twice',
    history: requested(),
    event: (log) => log.next('run_requested', requestedData('run-1')),
    from: 'pending',
  },
  {
    name: 'a thought before run_started',
    history: requested(),
    event: (log) => log.next('thought', thoughtData({ kind: 'complete' })),
    from: 'pending',
  },
  {
    name: 'a first event that is not run_requested',
    history: new RunLog(),
    event: (log) => log.next('run_started', {}),
    from: 'none',
  },
  {
    name: 'a thought while calls are pending',
    history: pendingCall(),
    event: (log) => log.next('thought', thoughtData({ kind: 'complete' })),
    from: 'running',
  },
  {
    name: 'a thought while the previous decision is not fully recorded',
    history: halfRecorded(),
    event: (log) => log.next('thought', thoughtData({ kind: 'complete' })),
    from: 'running',
  },
  {
    name: 'a thought while waiting',
    history: running().add('wait_requested', { waitId: 'w', kind: 'signal', signal: 'go' }),
    event: (log) => log.next('thought', thoughtData({ kind: 'complete' })),
    from: 'waiting',
  },
  {
    name: 'tool_call_completed for an unknown call',
    history: pendingCall(),
    event: (log) =>
      log.next('tool_call_completed', {
        callId: 'call-9',
        idempotencyKey: 'k',
        result: null,
        attempt: 1,
        deduped: false,
        durationMs: 1,
      }),
    from: 'running',
  },
  {
    name: 'tool_call_failed for an unknown call',
    history: completed(),
    event: (log) =>
      log.next('tool_call_failed', {
        callId: 'call-9',
        idempotencyKey: 'k',
        error,
        attempt: 1,
        retryable: true,
      }),
    from: 'completed',
  },
  {
    name: 'an intent without an open decision',
    history: running(),
    event: (log) =>
      log.next('tool_call_requested', { callId: 'call-1', step: 1, ...build, idempotencyKey: 'k' }),
    from: 'running',
  },
  {
    name: 'an intent the open decision did not ask for',
    history: halfRecorded(),
    event: (log) =>
      log.next('tool_call_requested', { callId: 'call-7', step: 2, ...deploy, idempotencyKey: 'k' }),
    from: 'running',
  },
  {
    name: 'the same intent twice',
    history: halfRecorded(),
    event: (log) => log.next('tool_call_requested', { ...log.intent('call-1'), step: 2 }),
    from: 'running',
  },
  {
    name: 'an intent that skips a step',
    history: halfRecorded(),
    event: (log) =>
      log.next('tool_call_requested', { callId: 'call-2', step: 3, ...deploy, idempotencyKey: 'k' }),
    from: 'running',
  },
  {
    name: 'an event of another run',
    history: running(),
    event: (log) => log.next('snapshot_taken', { atSeq: 2 }, { runId: 'run-2' }),
    from: 'running',
  },
  {
    name: 'a sequence equal to the last one',
    history: running(),
    event: (log) => log.next('snapshot_taken', { atSeq: 2 }, { seq: 2 }),
    from: 'running',
  },
  {
    name: 'a sequence before the last one',
    history: running(),
    event: (log) => log.next('snapshot_taken', { atSeq: 2 }, { seq: 1 }),
    from: 'running',
  },
  {
    name: 'anything on a rejected run',
    history: requested().add('run_rejected', { error }),
    event: (log) => log.next('snapshot_taken', { atSeq: 2 }),
    from: 'rejected',
  },
];

/** After the run ended only observations (and snapshots) may follow. */
const afterCompletion: [string, (log: RunLog) => RunEvent][] = [
  ['run_started', (log) => log.next('run_started', {})],
  ['thought', (log) => log.next('thought', thoughtData({ kind: 'complete' }))],
  [
    'tool_call_requested',
    (log) => log.next('tool_call_requested', { callId: 'call-2', step: 2, ...deploy, idempotencyKey: 'k' }),
  ],
  ['wait_requested', (log) => log.next('wait_requested', { waitId: 'w', kind: 'timer' })],
  [
    'child_run_requested',
    (log) => log.next('child_run_requested', { childRunId: 'c', request: requestedData('c').request }),
  ],
  ['budget_exceeded', (log) => log.next('budget_exceeded', { budget: 'time', limit: 1, used: 2 })],
  ['run_completed', (log) => log.next('run_completed', {})],
  ['run_failed', (log) => log.next('run_failed', { error })],
  ['run_cancelled', (log) => log.next('run_cancelled', { reason: 'late' })],
  ['run_rejected', (log) => log.next('run_rejected', { error })],
];

/** The typed error every refused event must carry. */
function isInvalidTransition(eventType: string, from: string, seq: number) {
  return (err: InvalidTransition) => {
    expect(err).toBeInstanceOf(DuraError);
    expect(err).toMatchObject({ name: 'InvalidTransition', code: 'invalid_transition', retryable: false });
    expect(err).toMatchObject({ eventType, fromStatus: from, seq });
    expect(err.message).toContain(`cannot apply to a run that is ${from}`);
  };
}

describe('evolve refuses events that cannot follow the state, with InvalidTransition', () => {
  it.each(cases)('$name', ({ history, event, from }) => {
    const next = event(history);
    given(history.events)
      .when(next)
      .thenThrows(InvalidTransition, isInvalidTransition(next.type, from, next.seq));
  });

  it.each(afterCompletion)('%s after run_completed', (_type, event) => {
    const log = completed();
    const next = event(log);
    given(log.events)
      .when(next)
      .thenThrows(InvalidTransition, isInvalidTransition(next.type, 'completed', next.seq));
  });

  it.each([
    ['signal_received', { signalId: 's', name: 'approve' }],
    ['timer_fired', { waitId: 'w' }],
  ] as const)('records a late %s after the run ended and changes nothing else', (type, data) => {
    const log = completed();
    const before = fold(log.events);
    const after = fold([...log.events, log.next(type, data) as RunEvent]);
    expect(after.status).toBe('completed');
    expect(after.calls).toEqual(before.calls);
    expect(after.waits).toEqual([]);
  });

  it('but records observations and snapshots after the run ended', () => {
    const log = running().think([build, deploy]).intents().complete('call-1').add('run_failed', { error });
    const { idempotencyKey } = log.intent('call-2');
    given(log.events)
      .when(
        log.next('tool_call_completed', {
          callId: 'call-2',
          idempotencyKey,
          result: 1,
          attempt: 1,
          deduped: false,
          durationMs: 1,
        }),
      )
      .then({ status: 'failed', calls: [{ status: 'completed' }, { status: 'completed', result: 1 }] });
    given(log.events)
      .when(log.next('snapshot_taken', { atSeq: log.lastSeq }))
      .then({ status: 'failed' });
    given(log.events)
      .when(log.next('child_run_completed', { childRunId: 'c', status: 'completed' }))
      .then({ status: 'failed' });
  });

  it('names the reason in the message', () => {
    const log = pendingCall();
    given(log.events)
      .when(runEvent('thought', thoughtData({ kind: 'complete' }), { seq: 9 }))
      .thenThrows(InvalidTransition, (err) => expect(err.message).toMatch(/tool calls are still unresolved/));
    given(log.events)
      .when(runEvent('run_started', {}, { seq: 9, runId: 'run-2' }))
      .thenThrows(InvalidTransition, (err) => expect(err.message).toMatch(/belongs to run run-2, not run-1/));
  });
});
