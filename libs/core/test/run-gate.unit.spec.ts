// Debounce and skip-if-running as pure decisions over one key's gate record: given the record, when an
// event or request arrives (or a window is due), then this record and outcome.
import { describe, expect, it } from 'vitest';
import type { GateRecord, RunRequest } from '@dura/contracts';
import {
  arrive,
  BadReference,
  closeWindow,
  firingDone,
  IDLE_RECORD_MS,
  isDue,
  isIdle,
  resolveGateKey,
  runInFlight,
  UNSEEN_RUN_GRACE_MS,
  type Arrival,
} from '../src/index';

const T0 = 1_700_000_000_000;
const requestWith =
  (n: number) =>
  (runId: string): RunRequest => ({
    v: 1,
    runId,
    agent: { kind: 'scripted', steps: [] },
    input: { n },
  });

function event(
  n: number,
  at: number,
  extra: Partial<Arrival> = {},
): Omit<Arrival, 'inFlight'> & { inFlight?: string } {
  return {
    scope: 'trigger:orders',
    key: 'c1',
    now: at,
    request: requestWith(n),
    source: `e${n}`,
    seq: n,
    runId: `trg-orders-e${n}`,
    skipIfRunning: false,
    ...extra,
  };
}

const debounce = { windowMs: 1000, windowRunId: (at: number) => `w-${at}` };
const given = (record: GateRecord | undefined, arrival: ReturnType<typeof event>) =>
  arrive(record, { inFlight: undefined, ...arrival });

describe('debounce', () => {
  it('the first event opens a window due windowMs later, whose run id is fixed at its opening', () => {
    const { record, outcome } = given(undefined, event(1, T0, { debounce }));
    expect(outcome).toEqual({
      kind: 'debounced',
      runId: `w-${T0}`,
      fireAt: T0 + 1000,
      replaced: undefined,
      events: 1,
    });
    expect(record.window).toMatchObject({ runId: `w-${T0}`, source: 'e1', events: 1, dropped: [] });
    expect(record.window?.request).toMatchObject({ runId: `w-${T0}`, input: { n: 1 } });
    expect(isDue(record, T0 + 999)).toBe(false);
    expect(isDue(record, T0 + 1000)).toBe(true);
  });

  it('each later event in the window replaces the request, drops the earlier one and pushes the end out', () => {
    let record = given(undefined, event(1, T0, { debounce })).record;
    record = given(record, event(2, T0 + 400, { debounce })).record;
    const third = given(record, event(3, T0 + 900, { debounce }));
    expect(third.outcome).toMatchObject({
      kind: 'debounced',
      runId: `w-${T0}`,
      fireAt: T0 + 1900,
      replaced: 'e2',
      events: 3,
    });
    expect(third.record.window).toMatchObject({ source: 'e3', dropped: ['e1', 'e2'], events: 3 });
    expect(third.record.window?.request).toMatchObject({ runId: `w-${T0}`, input: { n: 3 } });
    expect(third.record.counts.debounced).toBe(2);
  });

  it('an earlier event arriving late is stale: the later one stays, and the window counts it as dropped', () => {
    const record = given(undefined, event(5, T0, { debounce })).record;
    const late = given(record, event(4, T0 + 10, { debounce }));
    expect(late.outcome).toEqual({ kind: 'stale', lastSeq: 5, counted: { runId: `w-${T0}`, events: 2 } });
    expect(late.record.window).toMatchObject({ source: 'e5', events: 2, dropped: ['e4'], fireAt: T0 + 1000 });
    expect(late.record.window?.request).toMatchObject({ input: { n: 5 } });
    expect(late.record.counts).toMatchObject({ started: 0, debounced: 1 });
    // Delivered again (its planner died before acknowledging it): counted once.
    const again = given(late.record, event(4, T0 + 20, { debounce }));
    expect(again.outcome).toEqual({ kind: 'stale', lastSeq: 5 });
    expect(again.record).toBe(late.record);
    // The window's own event again while it is open: taken already, nothing changes.
    expect(given(record, event(5, T0 + 20, { debounce })).outcome).toMatchObject({
      kind: 'debounced',
      events: 1,
    });
  });

  it('three events taken out of order by two planners count three, and the firing says so', () => {
    let record = given(undefined, event(2, T0, { debounce })).record;
    record = given(record, event(3, T0 + 5, { debounce })).record;
    record = given(record, event(1, T0 + 8, { debounce })).record;
    expect(record.counts.debounced).toBe(2);
    const closed = closeWindow(record, T0 + 1005, undefined, 'replica-a');
    expect(closed.firing).toMatchObject({ events: 3, request: { input: { n: 3 } } });
    expect(closed.counts).toMatchObject({ started: 1, debounced: 2 });
  });

  it('an event overtaken into a window closed and not yet carried out counts in its firing', () => {
    const open = given(undefined, event(2, T0, { debounce })).record;
    const closed = closeWindow(open, T0 + 1000, undefined, 'replica-a');
    const late = given(closed, event(1, T0 + 1001, { debounce }));
    expect(late.outcome).toEqual({ kind: 'stale', lastSeq: 2, counted: { runId: `w-${T0}`, events: 2 } });
    expect(late.record.firing).toMatchObject({ events: 2, dropped: ['e1'] });
    expect(late.record.counts).toMatchObject({ started: 1, debounced: 1 });
    expect(given(late.record, event(1, T0 + 1002, { debounce })).record).toBe(late.record);
  });

  it('without debounce an overtaken event starts nothing and changes nothing', () => {
    const record = given(undefined, event(5, T0, { skipIfRunning: true })).record;
    const late = given(record, event(4, T0 + 10, { skipIfRunning: true }));
    expect(late).toEqual({ record, outcome: { kind: 'stale', lastSeq: 5 } });
  });

  it('a due window closes into a firing that starts its run; an event meanwhile opens the next window', () => {
    const open = given(undefined, event(1, T0, { debounce })).record;
    const closed = closeWindow(open, T0 + 1000, undefined, 'replica-a');
    expect(closed.window).toBeUndefined();
    expect(closed.firing).toMatchObject({
      runId: `w-${T0}`,
      outcome: 'start',
      claimedBy: 'replica-a',
      events: 1,
    });
    expect(closed.run).toEqual({ runId: `w-${T0}`, at: T0 + 1000 });
    const next = given(closed, event(2, T0 + 1001, { debounce })).record;
    expect(next.firing?.runId).toBe(`w-${T0}`);
    expect(next.window?.runId).toBe(`w-${T0 + 1001}`);
    expect(isDue(next, T0 + 5000)).toBe(false); // its firing is carried out first
    const done = firingDone(next, `w-${T0}`);
    expect(done.firing).toBeUndefined();
    expect(done.window?.runId).toBe(`w-${T0 + 1001}`);
    expect(firingDone(done, 'another')).toBe(done);
  });

  it('with skip-if-running, a window that ends while the key has a run in flight is skipped', () => {
    const open = given(undefined, event(1, T0, { debounce, skipIfRunning: true })).record;
    const closed = closeWindow(open, T0 + 1000, 'run-before', 'replica-a');
    expect(closed.firing).toMatchObject({ outcome: 'skip', runningRunId: 'run-before' });
    expect(closed.run).toBeUndefined();
    expect(closed.counts).toMatchObject({ started: 0, skipped: 1 });
  });
});

describe('skip-if-running without debounce', () => {
  it('starts when no run of the key is in flight, and skips while one is', () => {
    const first = given(undefined, event(1, T0, { skipIfRunning: true }));
    expect(first.outcome).toEqual({ kind: 'started', runId: 'trg-orders-e1' });
    expect(first.record.run).toEqual({ runId: 'trg-orders-e1', at: T0 });
    const second = arrive(first.record, {
      ...event(2, T0 + 5, { skipIfRunning: true }),
      inFlight: 'trg-orders-e1',
    });
    expect(second.outcome).toEqual({ kind: 'skipped', runningRunId: 'trg-orders-e1' });
    expect(second.record.run?.runId).toBe('trg-orders-e1');
    // Its own event delivered again after a crash: the same run again (publishing it twice is harmless).
    expect(given(second.record, event(1, T0 + 9, { skipIfRunning: true })).outcome).toEqual({
      kind: 'started',
      runId: 'trg-orders-e1',
    });
  });

  it('a run not yet in the log counts as in flight for a grace, then as gone', () => {
    const record = given(undefined, event(1, T0, { skipIfRunning: true })).record;
    expect(runInFlight(record, 'unseen', T0 + 1)).toBe('trg-orders-e1');
    expect(runInFlight(record, 'unseen', T0 + UNSEEN_RUN_GRACE_MS)).toBeUndefined();
    expect(runInFlight(record, 'in-flight', T0 + 10 * UNSEEN_RUN_GRACE_MS)).toBe('trg-orders-e1');
    expect(runInFlight(record, 'ended', T0 + 1)).toBeUndefined();
  });

  it('a record with nothing open and no run in flight is idle once untouched a while', () => {
    const record = given(undefined, event(1, T0, { skipIfRunning: true })).record;
    expect(isIdle(record, T0 + IDLE_RECORD_MS, 'trg-orders-e1')).toBe(false);
    expect(isIdle(record, T0 + IDLE_RECORD_MS - 1, undefined)).toBe(false);
    expect(isIdle(record, T0 + IDLE_RECORD_MS, undefined)).toBe(true);
  });
});

describe('resolveGateKey', () => {
  const input = { customer: { id: 42 }, region: 'eu' };
  it('reads a field, a template of fields, or the subject', () => {
    expect(resolveGateKey('$input.region', { input, subject: 's' })).toBe('eu');
    expect(resolveGateKey('c-{$input.customer.id}-{$input.region}', { input, subject: 's' })).toBe('c-42-eu');
    expect(resolveGateKey('{$subject}', { input, subject: 'dura.event.x' })).toBe('dura.event.x');
    expect(resolveGateKey('fixed', { input, subject: 's' })).toBe('fixed');
  });

  it('fails closed on a field the event lacks, naming it', () => {
    expect(() => resolveGateKey('$input.missing', { input, subject: 's' })).toThrow(BadReference);
    expect(() => resolveGateKey('k-{$input.missing}', { input, subject: 's' })).toThrow(/no field "missing"/);
    expect(() => resolveGateKey('{$steps.1.x}', { input, subject: 's' })).toThrow(
      /\$input… and \$subject only/,
    );
  });
});
