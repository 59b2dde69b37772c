import { describe, expect, it } from 'vitest';
import type { EventData, RunEvent } from '@dura/contracts';
import {
  budgetExceededEvents,
  budgetExcess,
  childRunIdFor,
  fold,
  nextAction,
  type EventDraft,
  type RunState,
} from '../src/index';
import { RunLog } from '../src/testing';

/** Appends what the planner would record for `state`, as it would: one guarded batch. */
function record(log: RunLog): RunState {
  const action = nextAction(fold(log.events));
  if (action.kind !== 'record') throw new Error(`expected a record action, got ${action.kind}`);
  for (const draft of action.events) log.add(draft.type, draft.data);
  return fold(log.events);
}

function drafts(log: RunLog): EventDraft[] {
  const action = nextAction(fold(log.events));
  return action.kind === 'record' ? action.events : [];
}

function intentTs(log: RunLog, callId: string): string {
  const event = log.events.find(
    (e): e is Extract<RunEvent, { type: 'tool_call_requested' }> =>
      e.type === 'tool_call_requested' && e.data.callId === callId,
  );
  return event!.meta.ts;
}

const running = () => new RunLog().request().start();

describe('dura.sleep: a durable timer as a tool call', () => {
  it('opens a timer wait due the seconds after the intent, dispatches the timer, resolves on timer_fired', () => {
    const log = running()
      .think([{ tool: 'dura.sleep', args: { seconds: 60 } }])
      .intents();
    const state = record(log);
    const until = new Date(Date.parse(intentTs(log, 'call-1')) + 60_000).toISOString();
    expect(state.status).toBe('waiting');
    // `delayMs` is what the timer counts (from the broker's time of the intent); `until` the planner's reading.
    expect(state.waits).toEqual([
      { waitId: 'sleep:call-1', kind: 'timer', callId: 'call-1', until, delayMs: 60_000 },
    ]);
    expect(nextAction(state)).toEqual({ kind: 'dispatch', calls: [], timers: state.waits, children: [] });

    log.add('timer_fired', { waitId: 'sleep:call-1' });
    const after = fold(log.events);
    expect(after.status).toBe('running');
    expect(after.calls[0]).toMatchObject({
      status: 'completed',
      result: { firedAt: log.events.at(-1)!.meta.ts },
    });
    expect(nextAction(after)).toEqual({ kind: 'decide' });
  });

  it('runs side by side with a gateway call; the next decision waits for both', () => {
    const log = running()
      .think([
        { tool: 'http.request', args: { url: 'https://example.com' } },
        { tool: 'dura.sleep', args: { until: '2030-01-01T00:00:00.000Z' } },
      ])
      .intents();
    const state = record(log);
    const action = nextAction(state);
    expect(action).toMatchObject({ kind: 'dispatch', timers: [{ waitId: 'sleep:call-2' }] });
    // A time the caller gave is kept as given: no length to count from the broker's clock.
    expect(state.waits[0]).toEqual({
      waitId: 'sleep:call-2',
      kind: 'timer',
      callId: 'call-2',
      until: '2030-01-01T00:00:00.000Z',
    });
    expect(action.kind === 'dispatch' && action.calls.map((c) => c.callId)).toEqual(['call-1']);
    log.complete('call-1');
    expect(nextAction(fold(log.events))).toMatchObject({ kind: 'dispatch', calls: [], timers: [{}] });
    log.add('timer_fired', { waitId: 'sleep:call-2' });
    expect(nextAction(fold(log.events))).toEqual({ kind: 'decide' });
  });

  it('fails the call, not the run, when the arguments are invalid: the model sees why', () => {
    const log = running()
      .think([{ tool: 'dura.sleep', args: { seconds: 5, until: 'x' } }])
      .intents();
    const [failed] = drafts(log);
    expect(failed).toMatchObject({
      type: 'tool_call_failed',
      data: { callId: 'call-1', retryable: false, error: { code: 'invalid_arguments' } },
    });
    record(log);
    expect(nextAction(fold(log.events))).toEqual({ kind: 'decide' });
  });

  it('ignores a timer that fires after the run was cancelled', () => {
    const log = running()
      .think([{ tool: 'dura.sleep', args: { seconds: 1 } }])
      .intents();
    record(log);
    log.add('signal_received', { signalId: 's1', name: 'cancel' });
    const state = record(log);
    expect(state.status).toBe('cancelled');
    expect(state.waits).toEqual([]);
    log.add('timer_fired', { waitId: 'sleep:call-1' });
    expect(fold(log.events).status).toBe('cancelled');
  });
});

describe('dura.wait_for_signal: human in the loop', () => {
  it('resolves with the signal payload as the call result', () => {
    const log = running()
      .think([{ tool: 'dura.wait_for_signal', args: { name: 'reply' } }])
      .intents();
    expect(record(log).waits).toEqual([
      { waitId: 'signal:call-1', kind: 'signal', callId: 'call-1', signal: 'reply' },
    ]);
    expect(nextAction(fold(log.events))).toEqual({ kind: 'idle', reason: 'waiting' });
    log.add('signal_received', { signalId: 'other', name: 'unrelated' });
    expect(fold(log.events).status).toBe('waiting');
    log.add('signal_received', { signalId: 's1', name: 'reply', payload: { text: 'ship it' } });
    const state = fold(log.events);
    expect(state.calls[0]).toMatchObject({ status: 'completed', result: { text: 'ship it' } });
    expect(nextAction(state)).toEqual({ kind: 'decide' });
  });

  it('times out as a failed call the model sees, and a late signal changes nothing', () => {
    const log = running()
      .think([{ tool: 'dura.wait_for_signal', args: { name: 'reply', timeoutSeconds: 30 } }])
      .intents();
    const state = record(log);
    expect(state.waits[0]).toMatchObject({ onTimeout: 'continue' });
    expect(nextAction(state)).toMatchObject({ kind: 'dispatch', timers: [{ waitId: 'signal:call-1' }] });
    log.add('timer_fired', { waitId: 'signal:call-1' });
    log.add('signal_received', { signalId: 'late', name: 'reply', payload: 1 });
    const after = fold(log.events);
    expect(after.calls[0]).toMatchObject({ status: 'failed', error: { code: 'signal_timed_out' } });
    expect(nextAction(after)).toEqual({ kind: 'decide' });
  });
});

describe('approval before a call is dispatched', () => {
  const approvalLog = (onTimeout: 'reject' | 'approve' | 'fail', timeoutSeconds?: number) =>
    running()
      .think([
        {
          tool: 'deploy.run',
          args: { env: 'prod' },
          approval: { onTimeout, ...(timeoutSeconds ? { timeoutSeconds } : {}) },
        } as never,
      ])
      .intents();

  it('waits for approve, then dispatches the call', () => {
    const log = approvalLog('reject');
    const state = record(log);
    expect(state.waits).toMatchObject([{ kind: 'approval', callId: 'call-1', signal: 'approve' }]);
    expect(nextAction(state)).toEqual({ kind: 'idle', reason: 'waiting' });
    log.add('signal_received', {
      signalId: 'a1',
      name: 'approve',
      payload: { callId: 'call-1', approved: true },
    });
    const approved = fold(log.events);
    expect(approved.status).toBe('running');
    expect(nextAction(approved)).toMatchObject({ kind: 'dispatch', calls: [{ callId: 'call-1' }] });
  });

  it('a rejection fails the call with the reason; the model decides what next', () => {
    const log = approvalLog('reject');
    record(log);
    log.add('signal_received', { signalId: 'r1', name: 'reject', payload: { reason: 'not on a Friday' } });
    const state = fold(log.events);
    expect(state.calls[0]).toMatchObject({ status: 'failed', error: { code: 'rejected' } });
    expect(state.calls[0]!.error!.message).toContain('not on a Friday');
    expect(nextAction(state)).toEqual({ kind: 'decide' });
  });

  it.each([
    ['approve', 'dispatch'],
    ['reject', 'decide'],
    ['fail', 'record'],
  ] as const)('on timeout with onTimeout=%s the next action is %s', (onTimeout, kind) => {
    const log = approvalLog(onTimeout, 3600);
    const state = record(log);
    expect(state.waits[0]!.timeoutAt).toBe(
      new Date(Date.parse(intentTs(log, 'call-1')) + 3_600_000).toISOString(),
    );
    expect(state.waits[0]!.delayMs, 'the timeout counts from the broker time of the intent').toBe(3_600_000);
    log.add('timer_fired', { waitId: 'approval:call-1' });
    const action = nextAction(fold(log.events));
    expect(action.kind).toBe(kind);
    if (action.kind === 'record') expect(action.events).toMatchObject([{ type: 'run_failed' }]);
  });
});

describe('dura.run_agent: a child run', () => {
  it('records the child request and waits; the child result resolves the call', () => {
    const log = running()
      .think([{ tool: 'dura.run_agent', args: { agent: 'researcher', input: { q: 'x' } } }])
      .intents();
    const state = record(log);
    const childRunId = childRunIdFor('run-1', 1);
    expect(state.children).toMatchObject([{ childRunId, callId: 'call-1', status: 'running' }]);
    expect(state.children[0]!.request).toMatchObject({
      runId: childRunId,
      agent: { kind: 'agent', name: 'researcher' },
      parent: { runId: 'run-1', callId: 'call-1' },
    });
    expect(nextAction(state)).toMatchObject({ kind: 'dispatch', children: [{ childRunId }] });
    log.add('child_run_completed', { childRunId, status: 'completed', output: { answer: 42 } });
    const after = fold(log.events);
    expect(after.calls[0]).toMatchObject({
      status: 'completed',
      result: { status: 'completed', output: { answer: 42 } },
    });
    expect(after.children[0]!.status).toBe('completed');
    expect(nextAction(after)).toEqual({ kind: 'decide' });
  });

  it('a failed or cancelled child is a failed call the parent sees', () => {
    const log = running()
      .think([{ tool: 'dura.run_agent', args: { agent: 'x' } }])
      .intents();
    record(log);
    log.add('child_run_completed', { childRunId: childRunIdFor('run-1', 1), status: 'cancelled' });
    expect(fold(log.events).calls[0]).toMatchObject({
      status: 'failed',
      error: { code: 'child_run_cancelled' },
    });
  });

  it('starts every child of one decision and waits for all of them', () => {
    const log = running()
      .think([
        { tool: 'dura.run_agent', args: { agent: 'a', input: 1 } },
        { tool: 'dura.run_agent', args: { agent: 'b', input: 2 } },
      ])
      .intents();
    const state = record(log);
    const [first, second] = [childRunIdFor('run-1', 1), childRunIdFor('run-1', 2)];
    expect(state.status).toBe('waiting');
    expect(state.children).toMatchObject([
      { childRunId: first, callId: 'call-1', status: 'running', request: { agent: { name: 'a' }, input: 1 } },
      {
        childRunId: second,
        callId: 'call-2',
        status: 'running',
        request: { agent: { name: 'b' }, input: 2 },
      },
    ]);
    expect(state.waits.map((w) => w.childRunId)).toEqual([first, second]);
    expect(nextAction(state)).toMatchObject({
      kind: 'dispatch',
      children: [{ childRunId: first }, { childRunId: second }],
    });

    // The second child ends first: the parent still waits for the other one, and decides nothing.
    log.add('child_run_completed', { childRunId: second, status: 'completed', output: 'b-done' });
    const half = fold(log.events);
    expect(half.status).toBe('waiting');
    expect(half.waits.map((w) => w.childRunId)).toEqual([first]);
    expect(nextAction(half)).toMatchObject({ kind: 'dispatch', children: [{ childRunId: first }] });

    log.add('child_run_completed', { childRunId: first, status: 'completed', output: 'a-done' });
    const after = fold(log.events);
    expect(after.status).toBe('running');
    expect(after.calls.map((c) => c.result)).toEqual([
      { status: 'completed', output: 'a-done' },
      { status: 'completed', output: 'b-done' },
    ]);
    expect(nextAction(after)).toEqual({ kind: 'decide' });
  });

  it('starts a child next to a signal wait of the same decision', () => {
    const log = running()
      .think([
        { tool: 'dura.wait_for_signal', args: { name: 'go' } },
        { tool: 'dura.run_agent', args: { agent: 'a' } },
      ])
      .intents();
    const state = record(log);
    expect(state.waits.map((w) => w.kind)).toEqual(['signal', 'child']);
    expect(state.children).toMatchObject([{ childRunId: childRunIdFor('run-1', 2), callId: 'call-2' }]);
  });

  it('refuses a second child for one call, a child id twice, and a child for a call that is not pending', () => {
    const log = running()
      .think([
        { tool: 'dura.run_agent', args: { agent: 'a' } },
        { tool: 'echo', args: {} },
      ])
      .intents();
    record(log);
    const request = (childRunId: string) => ({
      childRunId,
      request: { ...fold(log.events).children[0]!.request, runId: childRunId },
    });
    const refused = (data: EventData<'child_run_requested'>, reason: string) => {
      expect(() => fold([...log.events, log.next('child_run_requested', data)])).toThrow(reason);
    };
    refused({ ...request('other'), callId: 'call-1' }, 'call call-1 already has a child run');
    refused({ ...request(childRunIdFor('run-1', 1)), callId: 'call-1' }, 'was already requested');
    refused({ ...request('other'), callId: 'call-2' }, 'is a echo call, not dura.run_agent');
    refused({ ...request('other'), callId: 'call-9' }, 'call call-9 was never requested');
    refused(request('other'), 'must name the dura.run_agent call it serves');
  });

  it('keeps child ids within the run id limit at any depth', () => {
    const deep = 'r'.repeat(128);
    expect(childRunIdFor(deep, 12).length).toBeLessThanOrEqual(128);
    expect(childRunIdFor(deep, 12)).toBe(childRunIdFor(deep, 12));
    expect(childRunIdFor(deep, 12)).not.toBe(childRunIdFor(deep, 13));
  });
});

describe('budgets', () => {
  const budgeted = (policy: 'fail' | 'wait') =>
    new RunLog()
      .request()
      .add('run_started', { budget: { maxTokens: 1000, maxCostUsd: 1 }, budgetPolicy: policy });

  it('counts the reservation of the call under way, so the worst case never passes a limit', () => {
    const log = budgeted('fail');
    const state = fold(log.events);
    const now = new Date();
    expect(budgetExcess(state, { tokens: 1000, costUsd: 0.5 }, now)).toBeUndefined();
    expect(budgetExcess(state, { tokens: 1001, costUsd: 0.5 }, now)).toMatchObject({ budget: 'tokens' });
    expect(budgetExcess(state, { tokens: 10, costUsd: 1.01 }, now)).toMatchObject({ budget: 'cost' });
    log.add('budget_reserved', { tokens: 600, costUsd: 0.6 });
    expect(fold(log.events).budget.reserved).toEqual({ tokens: 600, costUsd: 0.6 });
    log.add('thought', {
      step: 0,
      model: { id: 'm', promptVersion: '1' },
      decision: { kind: 'tool_calls', calls: [{ callId: 'call-1', tool: 'echo', args: {} }] },
      usage: { inputTokens: 300, outputTokens: 200 },
      finishReason: 'tool_calls',
      costUsd: 0.4,
    });
    const settled = fold(log.events);
    expect(settled.budget).toMatchObject({ reserved: null, costUsd: 0.4 });
    expect(budgetExcess(settled, { tokens: 600, costUsd: 0.5 }, now)).toMatchObject({
      budget: 'tokens',
      used: 500,
    });
  });

  it('fails the run by policy, or waits for raise_budget and goes on', () => {
    const excess = { budget: 'tokens' as const, limit: 1000, used: 990 };
    expect(budgetExceededEvents(fold(budgeted('fail').events), excess)).toMatchObject([
      { type: 'budget_exceeded', data: { policy: 'fail' } },
      { type: 'run_failed', data: { error: { code: 'budget_exceeded' } } },
    ]);
    const log = budgeted('wait');
    for (const draft of budgetExceededEvents(fold(log.events), excess)) log.add(draft.type, draft.data);
    expect(fold(log.events).status).toBe('waiting');
    log.add('signal_received', { signalId: 'raise', name: 'raise_budget', payload: { maxTokens: 5000 } });
    const raised = fold(log.events);
    expect(raised.status).toBe('running');
    expect(raised.budget.limits.maxTokens).toBe(5000);
    expect(budgetExcess(raised, { tokens: 1000, costUsd: 0 }, new Date())).toBeUndefined();
  });

  it('checks steps and wall time before a model call', () => {
    const log = new RunLog().request().add('run_started', { budget: { maxSteps: 1, maxWallSeconds: 60 } });
    const started = Date.parse(log.events.at(-1)!.meta.ts);
    expect(
      budgetExcess(fold(log.events), { tokens: 0, costUsd: 0 }, new Date(started + 61_000)),
    ).toMatchObject({
      budget: 'time',
    });
    log
      .think([{ tool: 'echo', args: {} }])
      .intents()
      .complete('call-1');
    expect(budgetExcess(fold(log.events), { tokens: 0, costUsd: 0 }, new Date(started))).toMatchObject({
      budget: 'steps',
      used: 1,
    });
  });
});

describe('tools an agent may not call', () => {
  it('fails a call outside the pinned agent tools without dispatching it', () => {
    const log = new RunLog()
      .request()
      .add('run_started', {
        pinned: {
          agent: 'a',
          version: '1',
          promptVersion: 'p',
          provider: 'openai',
          model: 'm',
          tools: ['echo'],
        },
      })
      .think([
        { tool: 'echo', args: {} },
        { tool: 'pay.charge', args: { amount: 1 } },
      ])
      .intents();
    const [denied] = drafts(log);
    expect(denied).toMatchObject({
      type: 'tool_call_failed',
      data: { callId: 'call-2', error: { code: 'tool_not_allowed' } },
    });
    const state = record(log);
    const action = nextAction(state);
    expect(action.kind === 'dispatch' && action.calls.map((c) => c.callId)).toEqual(['call-1']);
  });
});
