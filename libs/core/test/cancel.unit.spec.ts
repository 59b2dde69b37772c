import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CANCEL_SIGNAL, fold, nextAction, type PlannerAction, type RunState } from '../src/index';
import { RunLog, arbValidHistory, given, runEvent } from '../src/testing';

const build = { tool: 'build.image', args: { repo: 'acme/web' } };
const deploy = { tool: 'deploy.service', args: { image: '$steps.1.imageTag' } };

function cancelled(reason: string): PlannerAction {
  return { kind: 'record', events: [{ type: 'run_cancelled', data: { reason } }] };
}

describe('a recorded cancel signal', () => {
  it('cancels a running run with the reason from its payload', () => {
    const log = new RunLog().request().start().think([build]).intents().complete('call-1');
    log.add('signal_received', { signalId: 's-1', name: CANCEL_SIGNAL, payload: { reason: 'wrong branch' } });
    given(log.events).whenDeciding().then(cancelled('wrong branch'));
  });

  it('cancels a run waiting for a different signal', () => {
    const log = new RunLog().request().start();
    log.add('wait_requested', { waitId: 'w-1', kind: 'signal', signal: 'approve' });
    log.add('signal_received', {
      signalId: 's-9',
      name: 'cancel',
      payload: { reason: 'nobody will approve' },
    });
    expect(fold(log.events).status).toBe('waiting');
    given(log.events).whenDeciding().then(cancelled('nobody will approve'));
  });

  it('wins over an open decision and over pending calls: nothing more is recorded or dispatched', () => {
    const open = new RunLog().request().start().think([build, deploy]).intents(1);
    open.add('signal_received', { signalId: 's-2', name: 'cancel', payload: { reason: 'stop' } });
    given(open.events).whenDeciding().then(cancelled('stop'));

    const pending = new RunLog().request().start().think([build]).intents();
    pending.add('signal_received', { signalId: 's-3', name: 'cancel', payload: { reason: 'stop' } });
    given(pending.events).whenDeciding().then(cancelled('stop'));
  });

  it('says which signal cancelled when no reason was given, or the reason is not a string', () => {
    const log = new RunLog().request().start();
    log.add('signal_received', { signalId: 'sig-7', name: 'cancel' });
    given(log.events).whenDeciding().then(cancelled('cancelled by signal sig-7 (no reason given)'));
    const odd = new RunLog().request().start();
    odd.add('signal_received', { signalId: 'sig-8', name: 'cancel', payload: { reason: 42 } });
    given(odd.events).whenDeciding().then(cancelled('cancelled by signal sig-8 (no reason given)'));
  });

  it('uses the first cancel when several arrived', () => {
    const log = new RunLog().request().start();
    log.add('signal_received', { signalId: 'a', name: 'cancel', payload: { reason: 'first' } });
    log.add('signal_received', { signalId: 'b', name: 'cancel', payload: { reason: 'second' } });
    given(log.events).whenDeciding().then(cancelled('first'));
  });

  it('is ignored by other signal names, and idles once the run is cancelled', () => {
    const log = new RunLog().request().start();
    log.add('signal_received', { signalId: 'c', name: 'cancelled', payload: { reason: 'x' } });
    given(log.events).whenDeciding().then({ kind: 'decide' });
    log.add('signal_received', { signalId: 'd', name: 'cancel' }).add('run_cancelled', { reason: 'x' });
    given(log.events).whenDeciding().then({ kind: 'idle', reason: 'finished' });
  });

  it('folds into a cancelled run whose late observations are still recorded', () => {
    const log = new RunLog().request().start().think([build]).intents();
    log.add('signal_received', { signalId: 'e', name: 'cancel', payload: { reason: 'stop' } });
    const action = nextAction(fold(log.events));
    if (action.kind !== 'record') throw new Error(`expected record, got ${action.kind}`);
    for (const draft of action.events) log.add(draft.type, draft.data);
    log.complete('call-1');
    const state = fold(log.events);
    expect(state.status).toBe('cancelled');
    expect(state.calls[0]?.status).toBe('completed');
  });
});

describe('cancel over generated histories', () => {
  it('a cancel arriving at any live point of any run is recorded next, and the fold accepts it', () => {
    fc.assert(
      fc.property(arbValidHistory(), fc.nat(), (events, at) => {
        const cut = events.length === 0 ? 0 : at % events.length;
        const state: RunState = fold(events.slice(0, cut + 1));
        if (state.status !== 'running' && state.status !== 'waiting') return;
        // A run already holding a cancel ends with that one (the first wins, tested above).
        if (state.signals.some((s) => s.name === 'cancel')) return;
        const signal = runEvent(
          'signal_received',
          { signalId: 'cancel-x', name: 'cancel', payload: { reason: 'generated' } },
          { seq: state.lastSeq + 1, runId: state.runId! },
        );
        const signalled = fold([signal], state);
        expect(nextAction(signalled)).toEqual(cancelled('generated'));
        const ended = fold(
          [
            runEvent(
              'run_cancelled',
              { reason: 'generated' },
              { seq: signalled.lastSeq + 1, runId: state.runId! },
            ),
          ],
          signalled,
        );
        expect(ended).toMatchObject({ status: 'cancelled', openDecision: null, waiting: null });
        expect(nextAction(ended)).toEqual({ kind: 'idle', reason: 'finished' });
      }),
      { numRuns: 200 },
    );
  });
});
