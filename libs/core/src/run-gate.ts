import type { GateOutcome, GateRecord, GateWindow, JsonValue, RunRequest } from '@dura/contracts';
import { BadReference, resolveReferences } from './references';

// Debounce and skip-if-running as pure decisions over one key's gate record. Callers read the record, decide
// here, and write the result with compare-and-set on the revision they read: two replicas deciding at once
// never both win, and the loser decides again from what the winner wrote.

/** A run started through a gate and not yet in the log counts as in flight this long, then as gone. */
export const UNSEEN_RUN_GRACE_MS = 60_000;
/** A record with nothing open is kept this long after its last change (a redelivered event meets it), then dropped. */
export const IDLE_RECORD_MS = 10 * 60_000;
const MAX_DROPPED_LISTED = 20;

/** Where the key's last run stands: folded from its log (or a read model), `unseen` before its first event. */
export type RunPhase = 'in-flight' | 'ended' | 'unseen';

export function emptyGateRecord(scope: string, key: string, now: number): GateRecord {
  return { scope, key, windows: 0, counts: { started: 0, debounced: 0, skipped: 0 }, updatedAt: now };
}

/** The key's run in flight, if any: running, or started less than the grace ago and not in the log yet. */
export function runInFlight(
  record: GateRecord | undefined,
  phase: RunPhase,
  now: number,
): string | undefined {
  const run = record?.run;
  if (!run) return undefined;
  if (phase === 'in-flight') return run.runId;
  if (phase === 'unseen' && now - run.at < UNSEEN_RUN_GRACE_MS) return run.runId;
  return undefined;
}

/** One event or request meeting the gate of its key. */
export interface Arrival {
  scope: string;
  key: string;
  now: number;
  /**
   * The request it starts under a run id (for a debounce: the window's, if it stays the last). A function:
   * secrets sealed into a request are bound to its run id, which a window fixes.
   */
  request: (runId: string) => RunRequest;
  /** Its id in logs and in the window's `dropped` list. */
  source: string;
  /** Its stream sequence (events): a redelivered event the record has taken already is not taken twice. */
  seq?: number;
  /** The run id a start at once gets. */
  runId: string;
  debounce?: {
    windowMs: number;
    /** The run id of a window opened at `openedAt` (fixed when it opens). */
    windowRunId: (openedAt: number) => string;
    triggerRevision?: number;
  };
  skipIfRunning: boolean;
  /** The key's run in flight now (`runInFlight` of the record read). */
  inFlight: string | undefined;
}

/** What the gate does with `arrival`, and the record to write (the same object when nothing changes). */
export function arrive(
  current: GateRecord | undefined,
  arrival: Arrival,
): { record: GateRecord; outcome: GateOutcome } {
  const base = current ?? emptyGateRecord(arrival.scope, arrival.key, arrival.now);
  const seen = arrival.seq !== undefined && base.lastSeq !== undefined && arrival.seq <= base.lastSeq;
  if (seen) {
    // Taken already (a planner died before acknowledging it) or overtaken by a later event of the key.
    if (base.run?.runId === arrival.runId)
      return { record: base, outcome: { kind: 'started', runId: arrival.runId } };
    const window = base.window;
    if (window && window.source === arrival.source)
      return { record: base, outcome: pending(window, undefined) };
    return overtaken(base, arrival);
  }
  const touched: GateRecord = {
    ...base,
    updatedAt: arrival.now,
    ...(arrival.seq === undefined ? {} : { lastSeq: arrival.seq }),
  };
  if (arrival.debounce) return debounced(touched, arrival, arrival.debounce);
  if (arrival.skipIfRunning && arrival.inFlight !== undefined)
    return {
      record: { ...touched, counts: { ...touched.counts, skipped: touched.counts.skipped + 1 } },
      outcome: { kind: 'skipped', runningRunId: arrival.inFlight },
    };
  return {
    record: {
      ...touched,
      run: { runId: arrival.runId, at: arrival.now },
      counts: { ...touched.counts, started: touched.counts.started + 1 },
    },
    outcome: { kind: 'started', runId: arrival.runId },
  };
}

function debounced(
  record: GateRecord,
  arrival: Arrival,
  debounce: NonNullable<Arrival['debounce']>,
): { record: GateRecord; outcome: GateOutcome } {
  const open = record.window;
  const fireAt = arrival.now + debounce.windowMs;
  const taken = { source: arrival.source, fireAt, windowMs: debounce.windowMs };
  if (open) {
    const window: GateWindow = {
      ...open,
      ...taken,
      request: arrival.request(open.runId),
      skipIfRunning: open.skipIfRunning || arrival.skipIfRunning,
      events: open.events + 1,
      dropped: dropList(open.dropped, open.source),
    };
    return {
      record: { ...record, window, counts: { ...record.counts, debounced: record.counts.debounced + 1 } },
      outcome: pending(window, open.source),
    };
  }
  // A window closed a moment ago and its firing not yet carried out: this event opens the next one.
  const openedAt = Math.max(arrival.now, (record.run?.at ?? 0) + 1);
  const runId = debounce.windowRunId(openedAt);
  const window: GateWindow = {
    ...taken,
    runId,
    request: arrival.request(runId),
    skipIfRunning: arrival.skipIfRunning,
    openedAt,
    events: 1,
    dropped: [],
    ...(debounce.triggerRevision === undefined ? {} : { triggerRevision: debounce.triggerRevision }),
  };
  return { record: { ...record, window, windows: record.windows + 1 }, outcome: pending(window, undefined) };
}

/**
 * An event overtaken by a later one of its key (two planners took them out of order): the later request stays,
 * and a debounce counts this one as dropped, in the window or firing it was overtaken into, so the record and
 * the run's log say how many events arrived. One the window lists as dropped already (a redelivery) is not
 * counted again; once the firing is carried out only the metric and the log count it.
 */
function overtaken(record: GateRecord, arrival: Arrival): { record: GateRecord; outcome: GateOutcome } {
  const lastSeq = record.lastSeq ?? 0;
  const into = record.window ?? record.firing;
  if (!arrival.debounce || !into || (into.dropped ?? []).includes(arrival.source))
    return { record, outcome: { kind: 'stale', lastSeq } };
  const dropped = { events: into.events + 1, dropped: dropList(into.dropped ?? [], arrival.source) };
  return {
    record: {
      ...record,
      ...(record.window ? { window: { ...record.window, ...dropped } } : {}),
      ...(!record.window && record.firing ? { firing: { ...record.firing, ...dropped } } : {}),
      updatedAt: arrival.now,
      counts: { ...record.counts, debounced: record.counts.debounced + 1 },
    },
    outcome: { kind: 'stale', lastSeq, counted: { runId: into.runId, events: dropped.events } },
  };
}

const dropList = (dropped: readonly string[], source: string): string[] =>
  [...dropped, source].slice(-MAX_DROPPED_LISTED);

function pending(window: GateWindow, replaced: string | undefined): GateOutcome {
  return { kind: 'debounced', runId: window.runId, fireAt: window.fireAt, replaced, events: window.events };
}

/** True when the record's window has ended and nothing else of it is being carried out. */
export function isDue(record: GateRecord, now: number): boolean {
  return record.window !== undefined && record.firing === undefined && record.window.fireAt <= now;
}

/**
 * Closes the due window: it becomes a firing (start its run, or skip it when skip-if-running finds the key's
 * run in flight), claimed by `replica`. Written before anything is published: a replica killed in between
 * leaves it for another.
 */
export function closeWindow(
  record: GateRecord,
  now: number,
  inFlight: string | undefined,
  replica: string,
): GateRecord {
  const window = record.window;
  if (!window) return record;
  const skip = window.skipIfRunning && inFlight !== undefined;
  const { window: _closed, ...rest } = record;
  return {
    ...rest,
    updatedAt: now,
    firing: {
      runId: window.runId,
      request: window.request,
      outcome: skip ? 'skip' : 'start',
      ...(skip ? { runningRunId: inFlight } : {}),
      events: window.events,
      dropped: window.dropped,
      claimedBy: replica,
    },
    ...(skip ? {} : { run: { runId: window.runId, at: now } }),
    counts: {
      ...record.counts,
      ...(skip ? { skipped: record.counts.skipped + 1 } : { started: record.counts.started + 1 }),
    },
  };
}

/** The record once the firing of `runId` is carried out (unchanged when another is there now). */
export function firingDone(record: GateRecord, runId: string): GateRecord {
  if (record.firing?.runId !== runId) return record;
  const { firing: _done, ...rest } = record;
  return rest;
}

/** A record holding nothing anyone needs any more: no window, no firing, no run in flight, idle a while. */
export function isIdle(record: GateRecord, now: number, inFlight: string | undefined): boolean {
  return (
    record.window === undefined &&
    record.firing === undefined &&
    inFlight === undefined &&
    now - record.updatedAt >= IDLE_RECORD_MS
  );
}

const PLACEHOLDER = /\{(\$[^{}]+)\}/g;
const STRING_FOR = (value: JsonValue): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The key of an event under a trigger's key template: `"$input.customer"` is the value of that field,
 * `"customer-{$input.customer}"` puts it in text, `{$subject}` is the event's subject. A field the event lacks
 * is a `BadReference` naming it: the event cannot be keyed, and a gate fails closed.
 */
export function resolveGateKey(template: string, event: { input: JsonValue; subject: string }): string {
  const one = (reference: string): string => {
    if (reference === '$subject') return event.subject;
    if (!reference.startsWith('$input'))
      throw new BadReference(`${reference}: a key may use $input… and $subject only`);
    return STRING_FOR(resolveReferences(reference, { results: new Map(), input: event.input }));
  };
  const key = template.startsWith('$')
    ? one(template)
    : template.replace(PLACEHOLDER, (_all, ref: string) => one(ref));
  if (key.length === 0 || key.length > 200)
    throw new BadReference(`the key of "${template}" is ${key.length} characters: a key has 1 to 200`);
  return key;
}
