// Budgets across a crash (issue 7, acceptance 2: one fault test per capability).
//
// Before each model call the planner journals the call's worst case (`budget_reserved`: the conversation's
// estimated input plus the agent's maxTokens, priced) and only then asks the model; spend plus reservation
// never passes a limit. The worst moment to die is right after the reservation is recorded and before the
// model is asked (failpoint planner.after-reserve): the planner that picks the run up must reuse the open
// reservation (no second one for the same decision) and ask the model once. When the next reservation would
// pass the cost limit, a `wait` policy records `budget_exceeded` and a budget wait without calling the model;
// the signal `raise_budget` lifts the limit and the run goes on. A `fail` policy on `maxSteps` fails the run
// before the model is asked past the limit, also across a SIGKILL.
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { createDuraClient } from '@dura/client';
import { expectKilledAt, logOf, useCrashSystem, watchToEnd, untilLogged } from './crash-harness';
import {
  AGENT_TOOLS_ENV,
  fakeModel,
  requestsPerDecision,
  toolResults,
  useScriptedLlm,
  writeAgentsFile,
  type WireBody,
} from './scripted-llm';

// $0.001 a token either way: a call reporting 200 + 50 tokens costs $0.25, and a reservation (the estimated
// input plus maxTokens = 100 of output) costs about $0.15 at the start and grows with the conversation. With
// a $0.60 limit the first two calls fit and the third one's reservation ($0.50 spent + ~$0.25) does not.
const PRICE = { inputPerMTokUsd: 1_000, outputPerMTokUsd: 1_000 };
const USAGE = { inputTokens: 200, outputTokens: 50 };
const COST_PER_CALL = 0.25;
const COST_LIMIT = 0.6;
const RAISED_LIMIT = 2;
const MAX_STEPS = 2;

const fake = useScriptedLlm();
const crash = useCrashSystem(['tool-gateway', 'projector'], { env: () => AGENT_TOOLS_ENV });

async function agentsPath(): Promise<string> {
  const url = fake.llm().url;
  return writeAgentsFile(fake.dir(), 'budget-agents', {
    agents: [
      {
        name: 'spender',
        version: '1',
        systemPrompt: 'You charge the amounts you are asked to, one per step.',
        model: fakeModel(url),
        tools: ['pay.charge'],
        budget: { maxCostUsd: COST_LIMIT },
        onBudgetExceeded: 'wait',
      },
      {
        name: 'stepper',
        version: '1',
        systemPrompt: 'You charge until told to stop.',
        model: fakeModel(url),
        tools: ['pay.charge'],
        budget: { maxSteps: MAX_STEPS },
        onBudgetExceeded: 'fail',
      },
    ],
    prices: { 'fake-1': PRICE },
  });
}

/** Charges `calls` times (100, 200, ...), then answers; every answer reports USAGE. */
function charges(calls: number, forever = false) {
  return (body: WireBody) => {
    const done = toolResults(body).length;
    if (!forever && done >= calls)
      return { kind: 'message' as const, content: `Charged ${done} times.`, usage: USAGE };
    return {
      kind: 'message' as const,
      content: `Charge number ${done + 1}.`,
      toolCalls: [{ name: 'pay__charge', arguments: { amount: (done + 1) * 100 } }],
      usage: USAGE,
    };
  };
}

const count = (log: readonly RunEvent[], type: RunEvent['type']) => log.filter((e) => e.type === type).length;

/**
 * Walks the log with the limit in force at each point (the run's, then each `raise_budget`): what was spent
 * (thoughts and summaries) never passes it, nor does spend plus a reservation when it is recorded.
 */
function expectCostWithinLimits(log: readonly RunEvent[]): number {
  let limit = Number.POSITIVE_INFINITY;
  let spent = 0;
  for (const event of log) {
    switch (event.type) {
      case 'run_started':
        limit = event.data.budget?.maxCostUsd ?? limit;
        break;
      case 'signal_received': {
        const raised = (event.data.payload as { maxCostUsd?: number } | undefined)?.maxCostUsd;
        if (event.data.name === 'raise_budget' && raised !== undefined) limit = raised;
        break;
      }
      case 'budget_reserved':
        expect(spent + event.data.costUsd, `reservation at seq ${event.seq}`).toBeLessThanOrEqual(limit);
        break;
      case 'thought':
      case 'context_summarized':
        spent += event.data.costUsd ?? 0;
        expect(spent, `spend after seq ${event.seq}`).toBeLessThanOrEqual(limit);
        break;
      default:
    }
  }
  return spent;
}

describe('an agent run with budgets', () => {
  it('killed after a reservation is recorded: reuses it, waits at the cost limit without asking the model, resumes on raise_budget', async () => {
    const sys = crash();
    const llm = fake.llm();
    const runId = 'budget-wait';
    const input = 'Charge 100, then 200, then report.';
    llm.script(input, charges(2));

    await sys.restart('planner', 'planner.after-reserve:2', { DURA_AGENTS: await agentsPath() });
    await sys.submit({ runId, agent: { kind: 'agent', name: 'spender' }, input });
    await expectKilledAt(sys, 'planner', 'planner.after-reserve:2');

    // The second decision's worst case is journaled; the model was never asked for it.
    const atKill = await logOf(sys, runId);
    expect(atKill.at(-1)?.type).toBe('budget_reserved');
    expect(count(atKill, 'budget_reserved')).toBe(2);
    expect(count(atKill, 'thought')).toBe(1);
    expect(requestsPerDecision(llm.requestsFor(input))).toEqual({ start: 1 });

    await sys.restart('planner', undefined, { DURA_AGENTS: await agentsPath() });
    const waiting = await untilLogged(
      sys,
      runId,
      (e) => e.type === 'wait_requested' && e.data.kind === 'budget',
      'the budget wait',
    );
    // The open reservation was reused: two reservations for two decisions, each asked once.
    expect(waiting.map((e) => e.type)).toEqual([
      'run_requested',
      'run_started',
      'budget_reserved',
      'thought',
      'tool_call_requested',
      'tool_call_completed',
      'budget_reserved',
      'thought',
      'tool_call_requested',
      'tool_call_completed',
      'budget_exceeded',
      'wait_requested',
    ]);
    const exceeded = waiting.find((e) => e.type === 'budget_exceeded');
    expect(exceeded?.data).toMatchObject({
      budget: 'cost',
      limit: COST_LIMIT,
      used: COST_PER_CALL * 2,
      policy: 'wait',
    });
    expect(waiting.at(-1)?.data).toMatchObject({ kind: 'budget', signal: 'raise_budget' });
    expect(fold(waiting).status).toBe('waiting');
    // The third decision was not asked: budget_exceeded came without a model call.
    expect(requestsPerDecision(llm.requestsFor(input))).toEqual({ start: 1, 'call-1': 1 });
    expect(expectCostWithinLimits(waiting)).toBeCloseTo(COST_PER_CALL * 2, 9);

    await createDuraClient(sys.system).signal(runId, 'raise_budget', {
      signalId: 'raise-1',
      payload: { maxCostUsd: RAISED_LIMIT },
    });
    const log = await watchToEnd(sys, runId, 30_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    const state = fold(log);
    expect(state.output).toBe('Charged 2 times.');
    expect(state.budget.limits.maxCostUsd).toBe(RAISED_LIMIT);
    expect(count(log, 'budget_reserved')).toBe(3);
    expect(requestsPerDecision(llm.requestsFor(input))).toEqual({ start: 1, 'call-1': 1, 'call-2': 1 });
    // Every reservation is settled by exactly one thought, and spend stayed within the limit in force.
    const reservedThenThought = log
      .filter((e) => e.type === 'budget_reserved' || e.type === 'thought')
      .map((e) => e.type);
    expect(reservedThenThought).toEqual(Array(3).fill(['budget_reserved', 'thought']).flat());
    expect(expectCostWithinLimits(log)).toBeCloseTo(COST_PER_CALL * 3, 9);
    expect(state.budget.costUsd).toBeCloseTo(COST_PER_CALL * 3, 9);
    for (const call of state.calls) expect(sys.witness.effects(call.idempotencyKey)).toBe(1);
  });

  it('with a fail policy on maxSteps: fails the run before the model is asked past the limit, across a SIGKILL', async () => {
    const sys = crash();
    const llm = fake.llm();
    const runId = 'budget-steps';
    const input = 'Charge until I say stop.';
    llm.script(input, charges(0, true));

    // Killed after the last allowed step's intent is recorded, before its task is dispatched.
    await sys.restart('planner', `planner.after-intent:${MAX_STEPS}`, { DURA_AGENTS: await agentsPath() });
    await sys.submit({ runId, agent: { kind: 'agent', name: 'stepper' }, input });
    await expectKilledAt(sys, 'planner', `planner.after-intent:${MAX_STEPS}`);
    expect((await logOf(sys, runId)).at(-1)?.type).toBe('tool_call_requested');

    await sys.restart('planner', undefined, { DURA_AGENTS: await agentsPath() });
    const log = await watchToEnd(sys, runId, 30_000);
    expect(log.map((e) => e.type)).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
      'tool_call_completed',
      'thought',
      'tool_call_requested',
      'tool_call_completed',
      'budget_exceeded',
      'run_failed',
    ]);
    expect(log.find((e) => e.type === 'budget_exceeded')?.data).toEqual({
      budget: 'steps',
      limit: MAX_STEPS,
      used: MAX_STEPS,
      policy: 'fail',
    });
    const state = fold(log);
    expect(state.status).toBe('failed');
    expect(state.error?.code).toBe('budget_exceeded');
    // Two decisions, each asked once; the third never reached the model.
    expect(requestsPerDecision(llm.requestsFor(input))).toEqual({ start: 1, 'call-1': 1 });
    expect(state.calls).toHaveLength(MAX_STEPS);
    for (const call of state.calls) expect(sys.witness.effects(call.idempotencyKey)).toBe(1);
  });
});
