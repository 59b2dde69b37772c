import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { RunEvent } from '@dura/contracts';
import {
  evolve,
  fold,
  followUps,
  idempotencyKey,
  isTerminal,
  nextAction,
  nextCallId,
  type EventDraft,
  type RunState,
} from '../src/index';
import { RunLog, arbValidHistory, given, runEvent, thoughtData } from '../src/testing';

const build = { tool: 'build.image', args: { repo: 'acme/web', ref: 'main' } };
const deploy = { tool: 'deploy.service', args: { image: '$steps.1.imageTag' } };
const notify = { tool: 'mail.send', args: { to: 'ops@acme.dev' } };

/** Appends drafts as the planner would: the next sequences, in order. */
function record(state: RunState, drafts: EventDraft[]): RunEvent[] {
  return drafts.map(
    (draft, i) =>
      runEvent(draft.type, draft.data as never, {
        seq: state.lastSeq + 1 + i,
        runId: state.runId!,
      }) as RunEvent,
  );
}

describe('nextAction', () => {
  it('does nothing for a run that was never requested', () => {
    given([]).whenDeciding().then({ kind: 'idle', reason: 'not_requested' });
  });

  it('starts a pending run', () => {
    given(new RunLog().request().events).whenDeciding().then({ kind: 'start' });
  });

  it('asks the model when a running run has nothing left undone', () => {
    given(new RunLog().request().start().events).whenDeciding().then({ kind: 'decide' });
    const log = new RunLog().request().start().think([build]).intents().complete('call-1');
    given(log.events).whenDeciding().then({ kind: 'decide' });
  });

  it('records every intent of a thought whose intents never made it (crash after the thought)', () => {
    const log = new RunLog('run-5').request().start().think([build, deploy]);
    given(log.events)
      .whenDeciding()
      .then({
        kind: 'record',
        events: [
          {
            type: 'tool_call_requested',
            data: {
              callId: 'call-1',
              step: 1,
              ...build,
              idempotencyKey: idempotencyKey({ runId: 'run-5', step: 1, ...build }),
            },
          },
          {
            type: 'tool_call_requested',
            data: {
              callId: 'call-2',
              step: 2,
              ...deploy,
              idempotencyKey: idempotencyKey({ runId: 'run-5', step: 2, ...deploy }),
            },
          },
        ],
      });
  });

  it('records only the missing intents after a crash between them, with the keys the first attempt used', () => {
    const full = new RunLog().request().start().think([build, deploy, notify]).intents();
    const crashed = new RunLog().request().start().think([build, deploy, notify]).intents(1);
    given(crashed.events)
      .whenDeciding()
      .then((action) => {
        expect(action.kind).toBe('record');
        const drafts = action.kind === 'record' ? action.events : [];
        expect(drafts.map((draft) => draft.data)).toEqual([full.intent('call-2'), full.intent('call-3')]);
      });
  });

  it('once recorded, the drafts close the decision and the calls get dispatched', () => {
    const crashed = new RunLog().request().start().think([build, deploy]).intents(1);
    const state = fold(crashed.events);
    const action = nextAction(state);
    const after = fold(record(state, action.kind === 'record' ? action.events : []), state);
    expect(after.openDecision).toBeNull();
    expect(nextAction(after)).toMatchObject({
      kind: 'dispatch',
      calls: [{ callId: 'call-1' }, { callId: 'call-2' }],
    });
  });

  it('records the completion or failure a final thought implies', () => {
    const running = new RunLog().request().start();
    given([
      ...running.events,
      running.next('thought', thoughtData({ kind: 'complete', output: { url: 'x' } })),
    ])
      .whenDeciding()
      .then({ kind: 'record', events: [{ type: 'run_completed', data: { output: { url: 'x' } } }] });
    const error = { code: 'gave_up', message: 'no' };
    given([...running.events, running.next('thought', thoughtData({ kind: 'fail', error }))])
      .whenDeciding()
      .then({ kind: 'record', events: [{ type: 'run_failed', data: { error } }] });
  });

  it('dispatches the pending calls, including one whose last attempt failed retryably', () => {
    const log = new RunLog().request().start().think([build, deploy, notify]).intents();
    log.complete('call-1').fail('call-2', true);
    given(log.events)
      .whenDeciding()
      .then({
        kind: 'dispatch',
        calls: [
          { callId: 'call-2', attempts: 1 },
          { callId: 'call-3', attempts: 0 },
        ],
      });
  });

  it('dispatches pending calls even while waiting, and idles when nothing is left', () => {
    const log = new RunLog().request().start().think([build]).intents();
    log.add('wait_requested', { waitId: 'w', kind: 'signal', signal: 'approve' });
    given(log.events)
      .whenDeciding()
      .then({ kind: 'dispatch', calls: [{ callId: 'call-1' }] });
    log.complete('call-1');
    given(log.events).whenDeciding().then({ kind: 'idle', reason: 'waiting' });
  });

  it.each([
    ['completed', new RunLog().request().start().finish()],
    [
      'failed',
      new RunLog()
        .request()
        .start()
        .add('run_failed', { error: { code: 'x', message: 'x' } }),
    ],
    [
      'cancelled',
      new RunLog().request().start().think([build]).intents().add('run_cancelled', { reason: 'user' }),
    ],
    ['rejected', new RunLog().request().add('run_rejected', { error: { code: 'x', message: 'x' } })],
  ])('idles once the run is %s, even with a call still pending', (_status, log) => {
    given(log.events).whenDeciding().then({ kind: 'idle', reason: 'finished' });
  });

  it('numbers the calls of the next decision after the recorded steps', () => {
    const state = fold(new RunLog().request().start().think([build, deploy]).intents().events);
    expect([0, 1].map((i) => nextCallId(state, i))).toEqual(['call-3', 'call-4']);
  });
});

describe('nextAction over generated histories', () => {
  it('always has an answer, and every answer is one the fold accepts', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        for (let cut = 0; cut <= events.length; cut += 1) {
          const state = fold(events.slice(0, cut));
          const action = nextAction(state);
          if (action.kind === 'record') {
            const after = fold(record(state, action.events), state);
            expect(after.openDecision).toBeNull();
          } else {
            expect(state.openDecision).toBeNull();
          }
          if (action.kind === 'dispatch') {
            expect(action.calls).toEqual(state.calls.filter((call) => call.status === 'pending'));
          }
          expect(action.kind === 'idle' && action.reason === 'finished').toBe(isTerminal(state.status));
          expect(action.kind === 'start').toBe(state.status === 'pending');
        }
      }),
      { numRuns: 150 },
    );
  });

  it('re-drives a decision after a crash at any point with the same intents the first attempt wrote', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        events.forEach((event, i) => {
          if (event.type !== 'thought' || event.data.decision.kind !== 'tool_calls') return;
          const afterThought = fold(events.slice(0, i + 1));
          const planned = followUps(afterThought, event.data.decision);
          const written = events
            .slice(i + 1, i + 1 + planned.length)
            .filter((e) => e.type === 'tool_call_requested');
          expect(planned.slice(0, written.length).map((d) => d.data)).toEqual(written.map((e) => e.data));
          // Every crash point leaves some intents unwritten: after 0, 1, … of the intents that made it.
          for (let k = 0; k < planned.length && k <= written.length; k += 1) {
            const crashed = fold(events.slice(i + 1, i + 1 + k), afterThought);
            const action = nextAction(crashed);
            expect(action).toEqual({ kind: 'record', events: planned.slice(k) });
          }
        });
      }),
      { numRuns: 150 },
    );
  });

  it('turns a recorded decision into follow-ups the fold accepts', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        const state = fold(events);
        if (nextAction(state).kind !== 'decide') return;
        const calls = [build, notify].map((call, i) => ({ callId: nextCallId(state, i), ...call }));
        const thought = runEvent('thought', thoughtData({ kind: 'tool_calls', calls }), {
          seq: state.lastSeq + 1,
          runId: state.runId!,
        });
        const decided = evolve(state, thought);
        const recorded = fold(record(decided, followUps(decided, thought.data.decision)), decided);
        expect(recorded.calls.slice(-2).map((call) => call.callId)).toEqual(calls.map((call) => call.callId));
      }),
    );
  });
});
