import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold, planFork, type RunState } from '@dura/core';
import { createScriptedModel, recordedModel, replayModelFor, replayRun, type Model } from '../src/index';
import { chargeSteps, scriptedRequest, simulateRun } from '../src/testing';

const scripted = createScriptedModel();

/** The scripted model, except that from step `at` on it charges 1 cent more. */
function divergingAt(at: number): Model {
  return {
    async decide(input) {
      const turn = await scripted.decide(input);
      if (turn.decision.kind !== 'tool_calls' || input.state.steps + 1 < at) return turn;
      const calls = turn.decision.calls.map((call) => ({
        ...call,
        args: { ...call.args, amount: Number(call.args['amount']) + 1 },
      }));
      return { ...turn, decision: { kind: 'tool_calls', calls } };
    },
  };
}

async function completedRun(runId = 'r-1', steps = 5): Promise<RunEvent[]> {
  const { events, state } = await simulateRun(scriptedRequest(runId, chargeSteps(steps)), scripted);
  expect(state.status).toBe('completed');
  return events;
}

/** A run that sleeps 2 s (its timer fires when due) and completes. */
async function sleptRun(): Promise<RunEvent[]> {
  const request = scriptedRequest('r-sleep', [{ tool: 'dura.sleep', args: { seconds: 2 } }]);
  const { events, state } = await simulateRun(request, scripted, {
    before: (now: RunState) =>
      now.waits
        .filter((wait) => wait.kind === 'timer')
        .map((wait) => ({ type: 'timer_fired' as const, data: { waitId: wait.waitId } })),
  });
  expect(state.status).toBe('completed');
  return events;
}

describe('replayRun', () => {
  it('replays a wait recorded before waits carried their length, and still catches a changed length', async () => {
    const events = await sleptRun();
    const wait = events.find((e) => e.type === 'wait_requested')!;
    expect(wait.data).toMatchObject({ delayMs: 2000 });
    const { delayMs: _length, ...before } = wait.data;
    const recordedBefore = events.map((e) => (e === wait ? { ...e, data: before } : e)) as RunEvent[];
    expect(await replayRun({ events: recordedBefore, model: scripted })).toMatchObject({ ok: true });
    const changed = events.map((e) => (e === wait ? { ...e, data: { ...e.data, delayMs: 3000 } } : e));
    expect(await replayRun({ events: changed, model: scripted })).toMatchObject({
      ok: false,
      seq: wait.seq,
    });
  });

  it('finds no divergence in a run the planner wrote, and counts what it checked', async () => {
    const events = await completedRun();
    const result = await replayRun({ events, model: scripted });
    // run_started, then per step a thought and an intent, and the final thought and completion.
    expect(result).toEqual({ ok: true, checked: events.length, decisions: 1 + 5 * 2 + 2 });
  });

  it('asks the scripted model again by default, for scripted agents', async () => {
    const events = await completedRun();
    expect(await replayRun({ events })).toMatchObject({ ok: true, checked: events.length });
  });

  it('points at the first thought a changed model decides differently, with both decisions', async () => {
    const events = await completedRun();
    const third = events.filter((e) => e.type === 'thought')[2]!;
    const result = await replayRun({ events, model: divergingAt(3) });
    expect(result).toMatchObject({
      ok: false,
      seq: third.seq,
      reason:
        'the recorded thought differs from what the planner decides now at data.decision.calls[0].args.amount',
      expected: { type: 'thought', data: { step: 2, decision: { calls: [{ args: { amount: 301 } }] } } },
      actual: { type: 'thought', data: { step: 2, decision: { calls: [{ args: { amount: 300 } }] } } },
    });
    expect(result.checked).toBe(events.indexOf(third));
  });

  it('checks what the planner derives from a decision: a tampered intent key is caught', async () => {
    const events = await completedRun();
    const intent = events.find((e) => e.type === 'tool_call_requested' && e.data.step === 2)!;
    const tampered = events.map((e) =>
      e === intent && e.type === 'tool_call_requested'
        ? { ...e, data: { ...e.data, idempotencyKey: 'r-1:2:pay.charge:forged' } }
        : e,
    );
    expect(await replayRun({ events: tampered, model: scripted })).toMatchObject({
      ok: false,
      seq: intent.seq,
      reason:
        'the recorded tool_call_requested differs from what the planner decides now at data.idempotencyKey',
    });
  });

  it('reports a planner event where the planner would append nothing', async () => {
    const events = await completedRun();
    const intent = events.findIndex((e) => e.type === 'tool_call_requested');
    // The run completes while call-1 has no observation: the planner would dispatch call-1 and wait.
    const completed = { ...events.at(-1)!, seq: events[intent]!.seq + 1 };
    const early = [...events.slice(0, intent + 1), completed];
    expect(fold(early).status).toBe('completed');
    expect(await replayRun({ events: early, model: scripted })).toMatchObject({
      ok: false,
      seq: completed.seq,
      expected: null,
      actual: { type: 'run_completed' },
      reason:
        'the planner would append nothing here (it dispatches call-1 and waits for observations), but the log has run_completed',
    });
  });

  it('ignores times, ids, causation, traces and token usage', async () => {
    const events = await completedRun();
    const restamped = events.map((e, i) => {
      const moved = {
        ...e,
        meta: { ...e.meta, id: `other-${i}`, ts: '2030-01-01T00:00:00.000Z', trace: 't' },
      };
      return e.type === 'thought'
        ? { ...moved, data: { ...e.data, usage: { inputTokens: 999, outputTokens: 42 } } }
        : moved;
    }) as RunEvent[];
    expect(await replayRun({ events: restamped, model: scripted })).toMatchObject({ ok: true });
  });

  it('folds inputs in wherever they arrived, and checks a cancel the planner recorded', async () => {
    let signalled = false;
    const { events, state } = await simulateRun(scriptedRequest('r-2', chargeSteps(6)), scripted, {
      before: (s) => {
        if (signalled || s.steps !== 3) return [];
        signalled = true;
        const data = { signalId: 'sig-1', name: 'cancel', payload: { reason: 'enough' } };
        return [{ type: 'signal_received', data }];
      },
    });
    expect(state).toMatchObject({ status: 'cancelled', steps: 3 });
    expect(await replayRun({ events, model: scripted })).toMatchObject({ ok: true, checked: events.length });
    const forged = events.map((e) =>
      e.type === 'run_cancelled' ? { ...e, data: { reason: 'something else' } } : e,
    );
    expect(await replayRun({ events: forged, model: scripted })).toMatchObject({
      ok: false,
      reason: 'the recorded run_cancelled differs from what the planner decides now at data.reason',
      expected: { type: 'run_cancelled', data: { reason: 'enough' } },
    });
  });

  it('checks the projector state against the fold, naming the first field that differs', async () => {
    const events = await completedRun();
    const state = JSON.parse(JSON.stringify(fold(events))) as RunState;
    expect(await replayRun({ events, model: scripted, projected: state })).toMatchObject({ ok: true });
    const stale = {
      ...state,
      calls: state.calls.map((c, i) => (i === 2 ? { ...c, status: 'pending' } : c)),
    };
    expect(await replayRun({ events, model: scripted, projected: stale })).toEqual({
      ok: false,
      checked: 0,
      decisions: 0,
      seq: events.at(-1)!.seq,
      expected: 'completed',
      actual: 'pending',
      reason:
        "the projector's state differs from the fold of the log at $.calls[2].status; rebuild the projection",
      projection: true,
    });
  });

  it('reports a log that does not fold', async () => {
    const events = await completedRun();
    const broken = [...events.slice(0, 3), ...events.slice(4)];
    const result = await replayRun({ events: broken, model: scripted });
    expect(result).toMatchObject({ ok: false, seq: events[4]!.seq });
    expect(!result.ok && result.reason).toMatch(/^the log does not fold: /);
  });

  it('answers from the recorded thoughts when the model is not re-asked, still checking the derivations', async () => {
    // A model whose words change every time (like an LLM): replay can only use what it recorded.
    let n = 0;
    const chatty: Model = {
      async decide(input) {
        n += 1;
        return { ...(await scripted.decide(input)), content: `thinking, take ${n}` };
      },
    };
    const { events } = await simulateRun(scriptedRequest('r-3', chargeSteps(3)), chatty);
    expect(await replayRun({ events, model: chatty })).toMatchObject({
      ok: false,
      reason: /at data.content$/,
    });
    expect(await replayRun({ events, model: recordedModel(events) })).toMatchObject({ ok: true });
    const last = events.at(-1)!;
    const forged = [...events.slice(0, -1), { ...last, data: { output: 'forged' } } as RunEvent];
    expect(await replayRun({ events: forged, model: recordedModel(events) })).toMatchObject({
      ok: false,
      seq: last.seq,
      reason: 'the recorded run_completed differs from what the planner decides now at data.output',
    });
  });

  it('treats the copies a fork starts with as inputs, and checks what the fork decided after them', async () => {
    const source = await completedRun('src', 6);
    const at = source.find((e) => e.type === 'tool_call_completed' && e.data.callId === 'call-3')!.seq;
    const plan = planFork({ source, atSeq: at, runId: 'fork', ts: '2025-01-02T00:00:00.000Z' });
    if (!plan.ok) throw new Error(plan.problem.message);
    const start = plan.events.map((e, i) => ({ ...e, seq: 1000 + i }));
    const { events, state } = await simulateRun(scriptedRequest('fork', chargeSteps(6)), scripted, { start });
    expect(state.status).toBe('completed');
    expect(await replayRun({ events, model: scripted })).toMatchObject({ ok: true, decisions: 3 * 2 + 2 });
    expect(await replayRun({ events, model: divergingAt(2) })).toMatchObject({
      ok: false,
      seq: events.find((e) => e.type === 'thought' && e.data.step === 3)!.seq,
    });
  });

  it('replayModelFor picks the scripted model for scripted runs', async () => {
    const events = await completedRun();
    const model = replayModelFor(events);
    const state = fold(events.slice(0, 2));
    const turn = await model.decide({ state, request: state.request! });
    expect(turn.decision).toEqual({
      kind: 'tool_calls',
      calls: [{ callId: 'call-1', tool: 'pay.charge', args: { amount: 100 } }],
    });
  });
});
