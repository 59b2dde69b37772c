import { describe, expect, it } from 'vitest';
import { ScheduleRecordSchema, type OverlapPolicy, type ScheduleRecord } from '@dura/contracts';
import { decideTicks, needsLastRunStatus, type TickPlan } from '../src/index';

const T0 = 1_800_000_000_000;

function given(overlap: OverlapPolicy, extra: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    ...ScheduleRecordSchema.parse({
      spec: {
        id: 'nightly',
        tenant: 'acme',
        everyMs: 1000,
        request: { v: 1, agent: { kind: 'agent', name: 'report' } },
        overlap,
      },
      paused: false,
      createdAt: T0,
      cursor: T0,
      history: [],
    }),
    ...extra,
  };
}

const plan = (fire: number[], skipped = 0): TickPlan => ({ fire, skipped, cursor: fire.at(-1) ?? T0 + 500 });
const running = { lastRunId: 'sch-nightly-1799999999' };

describe('decideTicks: overlap policies', () => {
  it('with no run going, every policy starts the tick', () => {
    for (const overlap of ['skip', 'buffer_one', 'allow_all', 'cancel_previous'] as const) {
      const next = decideTicks(given(overlap), plan([T0 + 1000]), false);
      expect(next?.pending.start).toEqual([{ tick: T0 + 1000, runId: 'sch-nightly-1800000001' }]);
      expect(next?.lastRunId).toBe('sch-nightly-1800000001');
      expect(next?.cursor).toBe(T0 + 1000);
    }
  });

  it('skip: a tick while the last run goes is recorded as skipped, nothing starts', () => {
    const next = decideTicks(given('skip', running), plan([T0 + 1000]), true);
    expect(next?.pending).toEqual({ start: [], cancel: [] });
    expect(next?.history).toEqual([{ tick: T0 + 1000, runId: 'sch-nightly-1800000001', action: 'skipped' }]);
    expect(next?.lastRunId).toBe(running.lastRunId);
  });

  it('buffer_one: keeps the first tick waiting, skips the next, and starts it once the last run ended', () => {
    const buffered = decideTicks(given('buffer_one', running), plan([T0 + 1000, T0 + 2000]), true);
    expect(buffered?.buffered).toBe(T0 + 1000);
    expect(buffered?.history.map((h) => h.action)).toEqual(['buffered', 'skipped']);
    expect(buffered?.pending.start).toEqual([]);
    // Still running, no new tick: nothing changes.
    expect(decideTicks(buffered!, plan([]), true)).toBeUndefined();
    // The last run ended: the buffered tick starts, under its own tick's run id.
    const started = decideTicks(buffered!, plan([]), false);
    expect(started?.buffered).toBeUndefined();
    expect(started?.pending.start).toEqual([{ tick: T0 + 1000, runId: 'sch-nightly-1800000001' }]);
  });

  it('allow_all: starts every tick, also while runs go', () => {
    const next = decideTicks(given('allow_all', running), plan([T0 + 1000, T0 + 2000]), true);
    expect(next?.pending.start.map((p) => p.runId)).toEqual([
      'sch-nightly-1800000001',
      'sch-nightly-1800000002',
    ]);
  });

  it('cancel_previous: cancels the run going, then starts the tick', () => {
    const next = decideTicks(given('cancel_previous', running), plan([T0 + 1000]), true);
    expect(next?.pending.cancel).toEqual([running.lastRunId]);
    expect(next?.pending.start.map((p) => p.runId)).toEqual(['sch-nightly-1800000001']);
    expect(next?.history.map((h) => h.action)).toEqual(['cancelled_previous']);
  });

  it('records missed ticks with their count, at the instant they were found', () => {
    const next = decideTicks(given('skip'), { fire: [], skipped: 7, cursor: T0 + 9000 }, false);
    expect(next?.history).toEqual([{ tick: T0 + 9000, runId: '', action: 'missed', count: 7 }]);
    expect(next?.cursor).toBe(T0 + 9000);
  });

  it('nothing due: no write at all', () => {
    expect(decideTicks(given('skip'), plan([]), false)).toBeUndefined();
  });

  it('asks for the last run status only when a tick or a buffered tick depends on it', () => {
    expect(needsLastRunStatus(given('skip'), plan([T0 + 1000]))).toBe(false);
    expect(needsLastRunStatus(given('skip', running), plan([]))).toBe(false);
    expect(needsLastRunStatus(given('skip', running), plan([T0 + 1000]))).toBe(true);
    expect(needsLastRunStatus(given('skip', { ...running, buffered: T0 }), plan([]))).toBe(true);
  });
});
