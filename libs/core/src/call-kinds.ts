import type { CallState } from './run-state';

/*
 * Kinds of calls deciders look for among a run's calls, most of which are resolved for good: each kept, per
 * calls array, as the ascending indices of its calls of that kind. An array derived by `withCallAdded` or
 * `withCallReplaced` (call-list.ts) takes its source's lists with its one change, so finding them costs what
 * they number, not what the run made.
 */
const KINDS = {
  /** Still open (pending, or its outcome unknown), or failed under a policy that fails the run. */
  notable: (call: CallState) =>
    call.status === 'pending' ||
    call.status === 'unknown' ||
    (call.status === 'failed' && call.failRun === true),
  /** Failed for good. */
  failed: (call: CallState) => call.status === 'failed',
  /** Its result is in the object store (`resultRef`). */
  offloaded: (call: CallState) => call.resultRef !== undefined,
};

export type CallKind = keyof typeof KINDS;

const NAMES = Object.keys(KINDS) as CallKind[];
const lists = new Map(NAMES.map((kind) => [kind, new WeakMap<readonly CallState[], readonly number[]>()]));

function indicesOf(kind: CallKind, calls: readonly CallState[]): readonly number[] {
  const byArray = lists.get(kind) as WeakMap<readonly CallState[], readonly number[]>;
  let indices = byArray.get(calls);
  if (!indices) {
    indices = calls.flatMap((call, i) => (KINDS[kind](call) ? [i] : []));
    byArray.set(calls, indices);
  }
  return indices;
}

/** The calls of `calls` of `kind`, in order. */
export function callsOfKind(kind: CallKind, calls: readonly CallState[]): CallState[] {
  return indicesOf(kind, calls).map((i) => calls[i] as CallState);
}

/**
 * The lists of `calls` with `call` put at `index` (appended when `index` is its length), to record for the
 * array that holds that once it does. Read before `calls` changes in place.
 */
export function kindsAfter(
  calls: readonly CallState[],
  index: number,
  call: CallState,
): (target: readonly CallState[]) => void {
  const next = NAMES.map((kind) => {
    const before = indicesOf(kind, calls);
    const others = index < calls.length ? before.filter((i) => i !== index) : before;
    if (!KINDS[kind](call)) return others;
    return others.length === 0 || (others.at(-1) as number) < index
      ? [...others, index]
      : [...others, index].sort((a, b) => a - b);
  });
  return (target) => NAMES.forEach((kind, i) => lists.get(kind)?.set(target, next[i] as readonly number[]));
}
