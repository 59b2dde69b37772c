import type { EventData } from '@dura/contracts';
import type { EventDraft } from './event-draft';
import type { RunState } from './run-state';

export type BudgetExcess = Pick<EventData<'budget_exceeded'>, 'budget' | 'limit' | 'used'>;

/** The worst case of one model call: what a decision reserves in the log before the model is asked. */
export interface Reservation {
  tokens: number;
  costUsd: number;
}

/**
 * The first budget that the next model call could break, or undefined. Tokens and cost count what was
 * spent plus `reservation`, the call's worst case, so no replica ever spends past a limit; steps count the
 * tool calls made; wall time runs from `run_started`.
 */
export function budgetExcess(state: RunState, reservation: Reservation, now: Date): BudgetExcess | undefined {
  const { limits, costUsd, startedAt } = state.budget;
  if (limits.maxSteps !== undefined && state.steps >= limits.maxSteps) {
    return { budget: 'steps', limit: limits.maxSteps, used: state.steps };
  }
  if (limits.maxWallSeconds !== undefined && startedAt !== null) {
    const elapsed = (now.getTime() - Date.parse(startedAt)) / 1000;
    if (elapsed > limits.maxWallSeconds) {
      return { budget: 'time', limit: limits.maxWallSeconds, used: Math.round(elapsed * 1000) / 1000 };
    }
  }
  const tokens = state.usage.inputTokens + state.usage.outputTokens;
  if (limits.maxTokens !== undefined && tokens + reservation.tokens > limits.maxTokens) {
    return { budget: 'tokens', limit: limits.maxTokens, used: tokens };
  }
  if (limits.maxCostUsd !== undefined && costUsd + reservation.costUsd > limits.maxCostUsd) {
    return { budget: 'cost', limit: limits.maxCostUsd, used: costUsd };
  }
  return undefined;
}

/** What the run records when a budget would be broken: the excess, then a failure or a wait, by policy. */
export function budgetExceededEvents(state: RunState, excess: BudgetExcess): EventDraft[] {
  const policy = state.budget.policy;
  const exceeded: EventDraft = { type: 'budget_exceeded', data: { ...excess, policy } };
  const what = `${excess.budget} budget: ${excess.used} used of ${excess.limit}`;
  if (policy === 'fail') {
    const message = `the run would exceed its ${what}; raise the agent's or the request's budget`;
    return [exceeded, { type: 'run_failed', data: { error: { code: 'budget_exceeded', message } } }];
  }
  return [
    exceeded,
    {
      type: 'wait_requested',
      data: { waitId: `budget:${state.lastSeq}`, kind: 'budget', signal: 'raise_budget' },
    },
  ];
}
