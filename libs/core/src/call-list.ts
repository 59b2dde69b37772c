import { kindsAfter } from './call-kinds';
import type { CallState } from './run-state';

/*
 * The calls array of a run state, and how the fold changes it. States are immutable, but the intermediate
 * states of one `fold` are private to it, so the arrays it created are grown and updated in place instead of
 * being copied for every event (which made a 10,000-event fold take seconds).
 */

/** Arrays created by the running `fold`: no state outside it holds them, so they may change in place. */
let owned: WeakSet<CallState[]> | undefined;
/**
 * callId → index, per calls array. A call keeps its index in every array derived from one by `withCallAdded`
 * and `withCallReplaced`, so a derived array shares its source's map (and adds its new call to it) instead of
 * building its own: a lookup costs the same late in a long run as early. Arrays sharing a map may hold
 * different calls (two folds of one state, each adding its own), but never one call at two indices: an array
 * that would put a call elsewhere than its map says gets a map of its own. So a call is in an array exactly
 * when it is at the index the map gives.
 */
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

function indexFor(calls: readonly CallState[]): Map<string, number> {
  let index = callIndexes.get(calls);
  if (!index) {
    index = new Map(calls.map((call, i) => [call.callId, i]));
    callIndexes.set(calls, index);
  }
  return index;
}

/** The index of the call `callId` in `calls`, or -1. */
export function indexOfCall(calls: readonly CallState[], callId: string): number {
  const at = indexFor(calls).get(callId);
  return at !== undefined && calls[at]?.callId === callId ? at : -1;
}

/** `calls` with `call` appended: in place when the running fold owns the array, else in a copy. */
export function withCallAdded(calls: CallState[], call: CallState): CallState[] {
  const shared = indexFor(calls);
  const kinds = kindsAfter(calls, calls.length, call);
  // Another array of the map holds this call at another index: this one takes a map of its own.
  const elsewhere = shared.get(call.callId);
  const index = elsewhere === undefined || elsewhere === calls.length ? shared : new Map(shared);
  index.set(call.callId, calls.length);
  const target = owned?.has(calls) ? calls : [...calls];
  if (target !== calls) owned?.add(target);
  callIndexes.set(target, index);
  target.push(call);
  kinds(target);
  return target;
}

/** `calls` with the call at `index` replaced: in place when the running fold owns the array, else in a copy. */
export function withCallReplaced(calls: CallState[], index: number, call: CallState): CallState[] {
  const kinds = kindsAfter(calls, index, call);
  const target = owned?.has(calls) ? calls : calls.slice();
  if (target !== calls) {
    owned?.add(target);
    callIndexes.set(target, indexFor(calls));
  }
  target[index] = call;
  kinds(target);
  return target;
}
