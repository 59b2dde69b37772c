import { describe, expect, it } from 'vitest';
import {
  aheadInLine,
  dueInLine,
  emptyLimitRecord,
  leftLine,
  LINE_RECHECK_MAX_MS,
  LINE_WAKE_RETRY_MS,
  MAX_LINE,
  QUEUE_GRACE_MS,
  settleTicket,
  takeTicket,
  type CallCost,
  type LimitRecord,
  type ModelLimit,
  type TicketOutcome,
} from '../src/index';

const MODEL = 'openai/gpt-4o-mini';
const call = (holder: string, outputTokens = 0): CallCost => ({ holder, inputTokens: 0, outputTokens });
const MINUTE = 60_000;

/** `count` callers asking at `now` in order; the record after them and each one's outcome. */
function askAll(
  record: LimitRecord,
  limit: ModelLimit,
  holders: readonly string[],
  now: number,
  cost = 0,
): { record: LimitRecord; outcomes: Map<string, TicketOutcome> } {
  const outcomes = new Map<string, TicketOutcome>();
  for (const holder of holders) {
    const taken = takeTicket(record, limit, call(holder, cost), now);
    record = taken.record;
    outcomes.set(holder, taken.outcome);
  }
  return { record, outcomes };
}

const names = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe('model limits: a caller in line sleeps until its turn', () => {
  const limit: ModelLimit = { model: MODEL, requestsPerMinute: 1 };

  it('given 100 callers under 1 request a minute, the last one sleeps until its turn (about 100 minutes), not 30 s, and keeps its place until then', () => {
    const { record, outcomes } = askAll(emptyLimitRecord(0), limit, names('r', 100), 0);
    const last = outcomes.get('r99');
    expect(last?.kind).toBe('line');
    const recheckAt = (last as { recheckAt: number }).recheckAt;
    expect(recheckAt).toBeGreaterThan(90 * MINUTE);
    expect(recheckAt).toBeLessThanOrEqual(100 * MINUTE);
    expect(record.line?.['r99']?.until).toBe(recheckAt + QUEUE_GRACE_MS);
    // Each caller in line is told a later turn than the one before it: nobody asks again all at once.
    const rechecks = names('r', 100).flatMap((h) => {
      const o = outcomes.get(h);
      return o?.kind === 'line' ? [o.recheckAt] : [];
    });
    expect(rechecks.length).toBeGreaterThan(90);
    rechecks.slice(1).forEach((at, i) => expect(at - (rechecks[i] as number)).toBe(MINUTE));
  });

  it('given a line that is full, a caller without a place sleeps until the line should have drained to it (at most the fallback), not 30 s', () => {
    const line: LimitRecord['line'] = {};
    for (let i = 0; i < MAX_LINE; i++)
      line[`q${i}`] = { tenant: 'default', priority: 0, since: i, until: 10_000 * MINUTE };
    const record: LimitRecord = { ...emptyLimitRecord(0), levels: { requests: -4 }, line };
    const fast: ModelLimit = { model: MODEL, requestsPerMinute: 600 };
    const outside = takeTicket(record, fast, call('outside'), 0);
    expect(outside.record.line).not.toHaveProperty('outside');
    // 5,000 callers ahead at 10 a second: about 500 s.
    expect(outside.outcome).toMatchObject({ kind: 'line' });
    const at = (outside.outcome as { recheckAt: number }).recheckAt;
    expect(at).toBeGreaterThan(490_000);
    expect(at).toBeLessThan(510_000);
    // Under 1 request a minute the line would drain in days: the caller asks again at the fallback.
    const slow = takeTicket(record, limit, call('outside'), 0);
    expect(slow.outcome).toMatchObject({ kind: 'line', recheckAt: LINE_RECHECK_MAX_MS });
  });
});

describe('model limits: a line moving faster than told wakes the callers whose turn came', () => {
  // Output tokens bind: each call's worst case is 100 of a 600-a-minute bucket, and most give 99 back.
  const limit: ModelLimit = { model: MODEL, outputTokensPerMinute: 600, headroomSeconds: 0 };

  it('given callers ahead that gave most of their tokens back, the callers now within reach are woken once, first in line first', () => {
    const asked = askAll(emptyLimitRecord(0), limit, names('r', 30), 0, 100);
    const inLine = names('r', 30).filter((h) => asked.outcomes.get(h)?.kind === 'line');
    expect(inLine.length).toBeGreaterThan(15);
    // Nothing moved faster than told: nobody is woken.
    expect(dueInLine(asked.record, limit, call('x', 100), 1_000).wake).toEqual([]);
    // The six that went used one token each: 594 tokens back, room for five more calls now.
    let record = asked.record;
    for (const holder of names('r', 6))
      record = settleTicket(record, limit, call(holder, 100), { inputTokens: 0, outputTokens: 1 }, 1_000);
    const due = dueInLine(record, limit, call('x', 100), 1_000);
    expect(due.wake.length).toBeGreaterThanOrEqual(5);
    expect(due.wake).toEqual(inLine.slice(0, due.wake.length));
    for (const holder of due.wake) {
      expect(due.record.line?.[holder]?.woken).toBe(1_000);
      // Woken, it keeps its place: its entry lasts as long as before.
      expect(due.record.line?.[holder]?.until).toBe(record.line?.[holder]?.until);
    }
    // Another change soon after does not wake them again; one after the retry time does (a lost wake).
    expect(dueInLine(due.record, limit, call('x', 100), 2_000).wake).toEqual([]);
    const retry = 1_000 + LINE_WAKE_RETRY_MS;
    const stillLate = due.wake.filter(
      (h) => (due.record.line?.[h]?.until ?? 0) - QUEUE_GRACE_MS > retry + 1_000,
    );
    expect(stillLate.length).toBeGreaterThan(0);
    expect(dueInLine(due.record, limit, call('x', 100), retry).wake).toEqual(stillLate);
    // Asking again, a woken caller takes a ticket within reach instead of waiting in line.
    const first = due.wake[0] as string;
    const again = takeTicket(due.record, limit, call(first, 100), 1_500);
    expect(again.outcome.kind).not.toBe('line');
    expect(again.record.line).not.toHaveProperty(first);
  });

  it('given the first caller in line leaving it (its run was cancelled), it holds nobody back and the next one is woken to be told an earlier turn', () => {
    const rpm: ModelLimit = { model: MODEL, requestsPerMinute: 1 };
    const asked = askAll(emptyLimitRecord(0), rpm, names('r', 10), 0);
    const inLine = names('r', 10).filter((h) => asked.outcomes.get(h)?.kind === 'line');
    const [gone, next] = inLine as [string, string];
    // One leaving from the back moves nobody's turn sooner: nobody is woken.
    const back = leftLine(asked.record, rpm, inLine.at(-1) as string, 1_000);
    expect(back.wake).toEqual([]);
    expect(back.record.line).not.toHaveProperty(inLine.at(-1) as string);
    const left = leftLine(asked.record, rpm, gone, 1_000);
    expect(left.record.line).not.toHaveProperty(gone);
    expect(left.wake).toEqual([next]);
    const told = (asked.outcomes.get(next) as { recheckAt: number }).recheckAt;
    const again = takeTicket(left.record, rpm, call(next), 1_000);
    expect(again.outcome).toMatchObject({ kind: 'line', ahead: 0 });
    expect((again.outcome as { recheckAt: number }).recheckAt).toBeLessThan(told - 50_000);
    // Leaving twice, or a caller that is not in line leaving, changes nothing.
    expect(leftLine(left.record, rpm, gone, 2_000)).toEqual({ record: left.record, wake: [] });
  });

  it('given 600 callers in line of whom a third never ask again, everyone else goes at the limit pace and each asks only a few times, not every 30 s', () => {
    const rpm: ModelLimit = { model: MODEL, requestsPerMinute: 60 };
    const asks = names('r', 600).map((holder, i) => ({ holder, at: i, gone: i % 3 === 1 }));
    const { went, asked } = admittedWithWakes(rpm, asks);
    const live = asks.filter((a) => !a.gone);
    expect(live.every((a) => went.has(a.holder))).toBe(true);
    // A caller that never comes back holds the line until a grace after its turn: the line goes no slower
    // than if every caller had gone (600 at one a second after the first minute's 58), and the ones that
    // did come back fill the capacity it left.
    expect(Math.max(...went.values())).toBeLessThan(600_000);
    // Each live caller asked a few times (first ask, its turn, a wake), not once per 30 s of its wait.
    expect(asked / live.length).toBeLessThan(4);
  }, 60_000);

  it('given 5,000 callers in line, finding a place in it and the callers to wake stay within a few milliseconds', () => {
    const line: LimitRecord['line'] = {};
    for (let i = 0; i < MAX_LINE; i++)
      line[`run-${i}:0`] = { tenant: `t${i % 7}`, priority: i % 11 === 0 ? 5 : 0, since: i, until: 10 ** 9 };
    const record: LimitRecord = { ...emptyLimitRecord(0), levels: { requests: -4 }, line };
    const limit1: ModelLimit = { model: MODEL, requestsPerMinute: 60 };
    // CPU time, not wall time: other work on the machine does not count. Measured at about 6 ms of CPU for
    // both on the 2-core machine; the bound leaves room for a slower one.
    const began = process.cpuUsage();
    for (let i = 0; i < 20; i++) {
      aheadInLine(record, limit1, call(`new-${i}`));
      dueInLine(record, limit1, call(`new-${i}`), 0);
    }
    const used = process.cpuUsage(began);
    const perAdmission = (used.user + used.system) / 1_000 / 20;
    expect(perAdmission).toBeLessThan(100);
  }, 30_000);
});

/**
 * Plays `asks` through admission as planners do, with wakes: a ticket's holder goes at its ticket, a caller in
 * line asks again at its recheck or when an admission wakes it; a `gone` caller never asks again after its
 * first ask (its run was cancelled). When each went, and how many asks the callers that did not go made.
 */
function admittedWithWakes(
  limit: ModelLimit,
  asks: readonly { holder: string; at: number; gone: boolean }[],
): { went: Map<string, number>; asked: number } {
  let record: LimitRecord = emptyLimitRecord(0);
  const pending = asks.map((ask, order) => ({ ...ask, order, first: true }));
  const went = new Map<string, number>();
  let asked = 0;
  for (let guard = 0; pending.length > 0; guard++) {
    if (guard > 1_000_000) throw new Error('admission never let every caller go');
    pending.sort((a, b) => a.at - b.at || a.order - b.order);
    const ask = pending.shift()!;
    if (ask.gone && !ask.first) continue;
    if (!ask.gone) asked += 1;
    const taken = takeTicket(record, limit, call(ask.holder), ask.at);
    const due = dueInLine(taken.record, limit, call(ask.holder), ask.at);
    record = due.record;
    for (const holder of due.wake) {
      const woken = pending.find((p) => p.holder === holder);
      if (woken && woken.at > ask.at) woken.at = ask.at + 50;
    }
    const outcome = taken.outcome;
    if (outcome.kind === 'line') pending.push({ ...ask, first: false, at: outcome.recheckAt });
    else went.set(ask.holder, outcome.kind === 'go' ? ask.at : outcome.at);
  }
  return { went, asked };
}
