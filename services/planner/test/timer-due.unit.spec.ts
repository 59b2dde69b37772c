import { describe, expect, it } from 'vitest';
import { fold, nextAction, type RunState } from '@dura/core';
import { RunLog } from '@dura/core/testing';
import { createTimerDue } from '../src/timer-due';

/** The run with its sleep's wait recorded, as the planner records it. */
function sleeping(args: { seconds: number } | { until: string }): { log: RunLog; state: RunState } {
  const log = new RunLog()
    .request()
    .start()
    .think([{ tool: 'dura.sleep', args }])
    .intents();
  const action = nextAction(fold(log.events));
  if (action.kind !== 'record') throw new Error(`expected the wait to be recorded, got ${action.kind}`);
  for (const draft of action.events) log.add(draft.type, draft.data);
  return { log, state: fold(log.events) };
}

/** A broker whose stored times are given per sequence; records which sequences were asked for. */
function broker(times: Record<number, string>) {
  const asked: number[] = [];
  return {
    asked,
    storedAt: (_runId: string, seq: number) => {
      asked.push(seq);
      const time = times[seq];
      return Promise.resolve(time === undefined ? undefined : new Date(time));
    },
  };
}

describe('createTimerDue', () => {
  it("counts a relative wait from the broker's time of its intent, not from the planner's reading", async () => {
    const { state } = sleeping({ seconds: 2 });
    const intent = state.calls[0]!;
    // The planner that recorded it was 5 min ahead: its reading of the due time is 5 min late.
    const store = broker({ [intent.requestedSeq]: '2026-11-29T09:00:00.000Z' });
    const due = createTimerDue(store);
    const wait = state.waits[0]!;
    expect(await due(state, wait)).toBe('2026-11-29T09:00:02.000Z');
    // Published again (after a crash, by another replica): the same due time.
    expect(await due(state, wait)).toBe('2026-11-29T09:00:02.000Z');
    expect(store.asked).toEqual([intent.requestedSeq, intent.requestedSeq]);
  });

  it('keeps a time the caller gave as given', async () => {
    const { state } = sleeping({ until: '2030-01-01T00:00:00.000Z' });
    const store = broker({});
    expect(await createTimerDue(store)(state, state.waits[0]!)).toBe('2030-01-01T00:00:00.000Z');
    expect(store.asked).toEqual([]);
  });

  it('keeps the recorded time of a wait recorded before waits carried their length', async () => {
    const { state } = sleeping({ seconds: 2 });
    const { delayMs: _recordedSince, ...old } = state.waits[0]!;
    const store = broker({});
    expect(await createTimerDue(store)(state, old)).toBe(old.until);
    expect(store.asked).toEqual([]);
  });

  it("falls back to the recorded time when the intent's message is gone from the stream", async () => {
    const { state } = sleeping({ seconds: 2 });
    expect(await createTimerDue(broker({}))(state, state.waits[0]!)).toBe(state.waits[0]!.until);
  });
});
