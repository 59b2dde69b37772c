import type { RunState, WaitState } from '@dura/core';

/**
 * The length of a relative wait (a sleep of N seconds, a signal's or an approval's timeout): its due time less
 * the time its call was requested, both written by the same planner's clock, so the length is right even when
 * that clock was off. Undefined for a wait on an absolute time (`sleep({ until })`) or without a known call.
 */
export function relativeDelayMs(state: RunState, wait: WaitState): number | undefined {
  const due = wait.until ?? wait.timeoutAt;
  const call = wait.callId === undefined ? undefined : state.calls.find((c) => c.callId === wait.callId);
  if (due === undefined || call?.requestedAt === undefined) return undefined;
  if (wait.until !== undefined && (call.args as { until?: unknown }).until !== undefined) return undefined;
  const delay = Date.parse(due) - Date.parse(call.requestedAt);
  // The wire carries 32 bits of milliseconds (49 days); a longer wait keeps its absolute due time.
  return Number.isFinite(delay) && delay >= 0 && delay <= 4_294_967_295 ? Math.round(delay) : undefined;
}
