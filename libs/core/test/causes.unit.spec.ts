import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { causeChain, fold, nextAction } from '../src/index';
import { RunLog } from '../src/testing';

/** The planner's causation ids: a call's outcome names its request, the events of a turn its first event. */
function withPlannerCauses(events: RunEvent[], causes: Record<number, number>): RunEvent[] {
  return events.map((event) => {
    const cause = causes[event.seq];
    return cause === undefined ? event : { ...event, meta: { ...event.meta, causationId: `run-1#${cause}` } };
  });
}

/** A run whose one call waited (approval of the call, or a ctx.approve signal wait) and was answered. */
function answered(call: { tool: string; args: object; approval?: object }, signal: string, payload: object) {
  const log = new RunLog()
    .request()
    .start()
    .think([call as never])
    .intents();
  const action = nextAction(fold(log.events));
  if (action.kind !== 'record') throw new Error(`expected a wait, got ${action.kind}`);
  for (const draft of action.events) log.add(draft.type, draft.data);
  log.add('signal_received', { signalId: 'sig-1', name: signal, payload: payload as never });
  return log;
}

const types = (events: RunEvent[], chain: number[]) =>
  chain.map((seq) => events.find((e) => e.seq === seq)?.type);

describe('causeChain: a call released by an approval', () => {
  // 1 run_requested, 2 run_started, 3 thought, 4 tool_call_requested, 5 wait_requested, 6 signal_received,
  // 7 tool_call_completed, 8 thought, 9 run_completed.
  const log = answered(
    { tool: 'deploy.run', args: { env: 'prod' }, approval: { onTimeout: 'reject' } },
    'approve',
    { callId: 'call-1', approved: true },
  )
    .complete('call-1')
    .finish();
  const events = withPlannerCauses(log.events, { 4: 3, 5: 3, 7: 4 });

  it('lists the signal and the wait among the causes of the call outcome, then the call request', () => {
    expect(types(events, causeChain(events, 7))).toEqual([
      'tool_call_completed',
      'signal_received',
      'wait_requested',
      'tool_call_requested',
      'thought',
      'run_started',
      'run_requested',
    ]);
  });

  it('and of the run end (`why <run> last`)', () => {
    const chain = causeChain(events, 9);
    expect(chain).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it('a rejected call: the signal is why it failed, the wait and request its causes', () => {
    const rejected = answered(
      { tool: 'deploy.run', args: { env: 'prod' }, approval: { onTimeout: 'reject' } },
      'reject',
      { callId: 'call-1', reason: 'freeze' },
    );
    const evs = withPlannerCauses(rejected.events, { 4: 3, 5: 3 });
    expect(types(evs, causeChain(evs, 6))).toEqual([
      'signal_received',
      'wait_requested',
      'tool_call_requested',
      'thought',
      'run_started',
      'run_requested',
    ]);
  });
});

describe('causeChain: a ctx.approve wait', () => {
  it('the signal that answered it names the wait, and the wait its call', () => {
    // 1..4 as above (the call is dura.wait_for_signal marked approval), 5 wait_requested, 6 signal_received
    // (caused, by its id, by some later event than the wait), 7 thought, 8 run_completed.
    const log = answered(
      { tool: 'dura.wait_for_signal', args: { name: 'deploy', approval: true } },
      'deploy',
      { approved: true },
    ).finish();
    const events = withPlannerCauses(log.events, { 4: 3, 5: 3, 6: 2 });
    expect(types(events, causeChain(events, 8))).toEqual([
      'run_completed',
      'thought',
      'signal_received',
      'wait_requested',
      'tool_call_requested',
      'thought',
      'run_started',
      'run_requested',
    ]);
  });
});

describe('causeChain: otherwise meta.causationId', () => {
  it('follows the ids back to the root, the latest event with an id before it', () => {
    const log = new RunLog()
      .request()
      .start()
      .think([{ tool: 'echo', args: {} }])
      .intents();
    log.complete('call-1').redeliver(log.events.at(-1) as RunEvent);
    const events = withPlannerCauses(log.events, { 5: 4, 6: 4 });
    expect(causeChain(events, 6)).toEqual([6, 4, 3, 2, 1]);
  });

  it('is empty for a seq with no event, and ends at a cause outside the log', () => {
    const log = new RunLog().request().start();
    expect(causeChain(log.events, 7)).toEqual([]);
    const orphan = withPlannerCauses(log.events, { 2: 99 });
    expect(causeChain(orphan, 2)).toEqual([2]);
  });
});
