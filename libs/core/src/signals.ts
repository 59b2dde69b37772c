/** The name of the signal that cancels a run; its payload may carry `{ reason: string }`. */
export const CANCEL_SIGNAL = 'cancel';
/** Approves the call awaiting approval (payload `{ callId? }`: the first such call when absent). */
export const APPROVE_SIGNAL = 'approve';
/** Rejects the call awaiting approval (payload `{ callId?, reason? }`): the model sees it as a failure. */
export const REJECT_SIGNAL = 'reject';
/** Raises a run's budgets (payload `{ maxSteps?, maxTokens?, maxCostUsd?, maxWallSeconds? }`). */
export const RAISE_BUDGET_SIGNAL = 'raise_budget';
/**
 * Lifts the operator wait a code agent's run stopped in (non-determinism, or code not driven by ctx): the
 * planner decides again with the code it serves now, and stops again if that code still diverges.
 */
export const RETRY_SIGNAL = 'retry';
