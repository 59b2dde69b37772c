import type { CallState } from './run-state';

/*
 * The calls array of a run state, and how the fold changes it. States are immutable, but the intermediate
 * states of one `fold` are private to it, so the arrays it created are grown and updated in place instead of
 * being copied for every event (which made a 10,000-event fold take seconds).
 */

/** Arrays created by the running `fold`: no state outside it holds them, so they may change in place. */
let owned: WeakSet<CallState[]> | undefined;
/** callId → index, per calls array; built on first lookup, kept up to date as an owned array grows. */
const callIndexes = new WeakMap<readonly CallState[], Map<string, number>>();

/** Runs one fold: arrays created meanwhile are its own, and change in place. */
export function foldingInPlace<T>(run: () => T): T {
  const outer = owned;
  owned = new WeakSet();
  try {
    return run();
  } finally {
    owned = outer;
  }
}

/** The index of the call `callId` in `calls`, or -1. */
export function indexOfCall(calls: readonly CallState[], callId: string): number {
  let index = callIndexes.get(calls);
  if (!index) {
    index = new Map(calls.map((call, i) => [call.callId, i]));
    callIndexes.set(calls, index);
  }
  return index.get(callId) ?? -1;
}

/** `calls` with `call` appended: in place when the running fold owns the array, else in a copy. */
export function withCallAdded(calls: CallState[], call: CallState): CallState[] {
  if (owned?.has(calls)) {
    calls.push(call);
    callIndexes.get(calls)?.set(call.callId, calls.length - 1);
    return calls;
  }
  const copy = [...calls, call];
  owned?.add(copy);
  return copy;
}

/** `calls` with the call at `index` replaced: in place when the running fold owns the array, else in a copy. */
export function withCallReplaced(calls: CallState[], index: number, call: CallState): CallState[] {
  const target = owned?.has(calls) ? calls : calls.slice();
  if (target !== calls) owned?.add(target);
  target[index] = call;
  return target;
}
