import { describe, expect, it } from 'vitest';
import type { JsonValue } from '@dura/contracts';
import { approvalVerdict, fold, nextAction, verdictSignal, verdictWaits, type RunState } from '../src/index';
import { RunLog } from '../src/testing';

/** Payloads that must never approve: each is a refusal naming what it got. */
const NOT_APPROVING: [string, JsonValue | undefined, string][] = [
  ['{}', {}, '{}'],
  ['null', null, 'null'],
  ['"yes"', 'yes', '"yes"'],
  ['{"approved":"true"}', { approved: 'true' }, '{"approved":"true"}'],
  ['no payload', undefined, 'no payload'],
];

describe('approvalVerdict: only {"approved": true} approves', () => {
  it('approves {"approved": true}, with or without other fields', () => {
    expect(approvalVerdict('deploy', { approved: true })).toEqual({ approved: true });
    expect(approvalVerdict('approve', { approved: true, callId: 'call-1' })).toEqual({ approved: true });
  });

  it.each(NOT_APPROVING)('refuses %s, naming what it got', (_, payload, shown) => {
    expect(approvalVerdict('deploy', payload)).toEqual({
      approved: false,
      reason: `approval signal 'deploy' carried ${shown} — only {"approved": true} approves`,
    });
  });

  it('an explicit refusal keeps its reason', () => {
    expect(approvalVerdict('deploy', { approved: false, reason: 'freeze' })).toEqual({
      approved: false,
      reason: 'freeze',
    });
    expect(approvalVerdict('deploy', { approved: false })).toEqual({ approved: false });
  });
});

describe('a call awaiting approval answered with the signal approve', () => {
  const waiting = () => {
    const log = new RunLog()
      .request()
      .start()
      .think([{ tool: 'deploy.run', args: { env: 'prod' }, approval: { onTimeout: 'reject' } } as never])
      .intents();
    const action = nextAction(fold(log.events));
    if (action.kind !== 'record') throw new Error(`expected the approval wait, got ${action.kind}`);
    for (const draft of action.events) log.add(draft.type, draft.data);
    return log;
  };

  it('given {"approved": true}, when folded, then the call is approved and dispatched', () => {
    const log = waiting();
    log.add('signal_received', {
      signalId: 'a',
      name: 'approve',
      payload: { callId: 'call-1', approved: true },
    });
    const state = fold(log.events);
    expect(state.calls[0]?.approval?.decision).toBe('approved');
    expect(nextAction(state)).toMatchObject({ kind: 'dispatch', calls: [{ callId: 'call-1' }] });
  });

  it.each(NOT_APPROVING)(
    'given %s, when folded, then the call is rejected, naming the payload',
    (_, payload, shown) => {
      const log = waiting();
      log.add('signal_received', {
        signalId: 'a',
        name: 'approve',
        ...(payload === undefined ? {} : { payload }),
      });
      const state = fold(log.events);
      expect(state.calls[0]).toMatchObject({
        status: 'failed',
        approval: { decision: 'rejected' },
        error: { code: 'rejected' },
      });
      expect(state.calls[0]?.error?.message).toBe(
        `deploy.run (step 1) was not approved: approval signal 'approve' carried ${shown} — only {"approved": true} approves`,
      );
      expect(state.waits).toEqual([]);
    },
  );

  it('given {"approved": false, "reason"}, then it is a person\'s rejection with that reason', () => {
    const log = waiting();
    log.add('signal_received', {
      signalId: 'a',
      name: 'approve',
      payload: { approved: false, reason: 'freeze' },
    });
    expect(fold(log.events).calls[0]?.error?.message).toBe(
      'deploy.run (step 1) was not approved: a human rejected it: freeze',
    );
  });

  it('reject refuses even when it says approved', () => {
    const log = waiting();
    log.add('signal_received', { signalId: 'r', name: 'reject', payload: { approved: true } });
    expect(fold(log.events).calls[0]).toMatchObject({ status: 'failed', approval: { decision: 'rejected' } });
  });
});

describe('ctx.approve waits: marked, found and answered', () => {
  const verdictWait = (): RunState => {
    const log = new RunLog()
      .request()
      .start()
      .think([{ tool: 'dura.wait_for_signal', args: { name: 'deploy', approval: true } }])
      .intents();
    const action = nextAction(fold(log.events));
    if (action.kind !== 'record') throw new Error(`expected the signal wait, got ${action.kind}`);
    for (const draft of action.events) log.add(draft.type, draft.data);
    return fold(log.events);
  };

  it('a wait_for_signal marked approval opens a signal wait marked as a verdict', () => {
    expect(verdictWait().waits).toEqual([
      { waitId: 'signal:call-1', kind: 'signal', callId: 'call-1', signal: 'deploy', approval: true },
    ]);
  });

  it('verdictWaits lists calls awaiting approval and ctx.approve waits, not plain signal waits', () => {
    const waits = [
      { waitId: 'a', kind: 'approval', callId: 'call-1', signal: 'approve' },
      { waitId: 'b', kind: 'signal', callId: 'call-2', signal: 'reply' },
      { waitId: 'c', kind: 'signal', callId: 'call-3', signal: 'deploy', approval: true },
      { waitId: 'd', kind: 'timer', callId: 'call-4' },
    ];
    expect(verdictWaits(waits).map((w) => w.waitId)).toEqual(['a', 'c']);
  });

  it('verdictSignal sends the wait its own signal with {"approved": true}, or a refusal with the reason', () => {
    const [wait] = verdictWaits(verdictWait().waits);
    expect(verdictSignal(wait!, { approved: true })).toEqual({ name: 'deploy', payload: { approved: true } });
    expect(verdictSignal(wait!, { approved: false, reason: 'freeze' })).toEqual({
      name: 'deploy',
      payload: { approved: false, reason: 'freeze' },
    });
    const call = { kind: 'approval', callId: 'call-7', signal: 'approve' };
    expect(verdictSignal(call, { approved: true })).toEqual({
      name: 'approve',
      payload: { callId: 'call-7', approved: true },
    });
    expect(verdictSignal(call, { approved: false })).toEqual({
      name: 'reject',
      payload: { callId: 'call-7', approved: false },
    });
  });
});
