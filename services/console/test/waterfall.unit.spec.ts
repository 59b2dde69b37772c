import { describe, expect, it } from 'vitest';
import { newEvent, type EventData, type EventType, type RunEvent } from '@dura/contracts';
import { buildWaterfall } from '../src/model/waterfall';
import { frontierThought, type JournalEntry } from '@dura/code-agents/engine';
import type { RunState } from '@dura/core';
import { eventLabel, eventNumbers, travelPosition } from '../src/model/event-numbers';
import { traceIdOf, traceLink } from '../src/model/trace';

/** A run's events, `gapMs` apart, with their seqs stamped as a reader sees them. */
function log(...drafts: [EventType, unknown, number?][]): RunEvent[] {
  let ms = Date.UTC(2026, 0, 1);
  return drafts.map(([type, data, gapMs = 100], i) => {
    ms += gapMs;
    const event = newEvent(type, data as EventData<typeof type>, {
      id: `e${i}`,
      runId: 'r1',
      ts: new Date(ms).toISOString(),
      correlationId: 'r1',
    });
    return { ...event, seq: i + 1 };
  });
}

const usage = { inputTokens: 120, outputTokens: 30 };
const thought = {
  step: 0,
  model: { id: 'gpt-x', promptVersion: '1' },
  decision: { kind: 'tool_calls', calls: [{ callId: 'c1', tool: 'pay.charge', args: {} }] },
  usage,
  finishReason: 'tool_calls',
  costUsd: 0.0123,
};

describe('buildWaterfall', () => {
  it('given a model call, a tool call and its result: bars span from ask to answer, with tokens, cost, duration, attempts', () => {
    const rows = buildWaterfall(
      log(
        ['run_started', {}, 0],
        ['budget_reserved', { tokens: 500, costUsd: 0.05 }],
        ['thought', thought, 900],
        ['tool_call_requested', { callId: 'c1', step: 1, tool: 'pay.charge', args: {}, idempotencyKey: 'k' }],
        [
          'tool_call_failed',
          {
            callId: 'c1',
            idempotencyKey: 'k',
            error: { code: 'timeout', message: 'slow' },
            attempt: 1,
            retryable: true,
          },
          50,
        ],
        [
          'tool_call_completed',
          { callId: 'c1', idempotencyKey: 'k', result: 1, attempt: 2, deduped: false, durationMs: 40 },
          250,
        ],
      ),
    );
    expect(rows.map((r) => [r.seq, r.kind, r.startMs, r.endMs])).toEqual([
      [1, 'run', 0, 0],
      [2, 'budget', 100, 100],
      [3, 'model', 100, 1000],
      [4, 'tool', 1100, 1400],
      [5, 'error', 1150, 1150],
      [6, 'tool', 1400, 1400],
    ]);
    expect(rows[2]!.facts).toEqual(['120 in / 30 out tokens', '$0.0123', 'decided tool_calls']);
    expect(rows[3]!.facts).toEqual(['completed after 300 ms', 'attempt 2']);
    expect(rows[4]!.facts).toEqual(['timeout', 'attempt 1', 'retryable']);
  });

  it('given only the first events of a run (still being read): a call whose result is not among them is not called pending', () => {
    const first = log(
      ['run_started', {}, 0],
      ['tool_call_requested', { callId: 'c1', step: 1, tool: 'pay.charge', args: {}, idempotencyKey: 'k' }],
    );
    expect(buildWaterfall(first, { complete: false })[1]!.facts).toEqual(['result not read yet']);
    expect(buildWaterfall(first)[1]!.facts).toEqual(['pending']);
  });

  it('given a wait: the bar stays open until the signal, timer or end that wakes it', () => {
    const rows = buildWaterfall(
      log(
        ['run_started', {}, 0],
        ['wait_requested', { waitId: 'w1', kind: 'signal', signal: 'go' }],
        ['wait_requested', { waitId: 'w2', kind: 'timer', until: '2026-01-02T00:00:00Z' }],
      ),
    );
    expect(rows[1]!.endMs).toBeUndefined();
    expect(rows[1]!.label).toBe('wait: signal go');
    const woken = buildWaterfall(
      log(
        ['run_started', {}, 0],
        ['wait_requested', { waitId: 'w1', kind: 'signal', signal: 'go' }],
        ['signal_received', { signalId: 's', name: 'go' }, 5000],
      ),
    );
    expect([woken[1]!.startMs, woken[1]!.endMs, woken[2]!.kind]).toEqual([100, 5100, 'signal']);
  });

  it('given a failed run: the row is an error with the reason', () => {
    const rows = buildWaterfall(log(['run_failed', { error: { code: 'budget', message: 'out of tokens' } }]));
    expect(rows[0]).toMatchObject({ kind: 'error', facts: ['budget: out of tokens'] });
  });

  it("given a code agent's steps: each reads as what its code did (calls, now/random/uuid, model calls with tokens), never 0 tokens", () => {
    // The thoughts exactly as @dura/code-agents records them.
    const agent = { name: 'refunder', version: '3' };
    const step = (steps: number, entries: JournalEntry[], decision: Parameters<typeof frontierThought>[3]) =>
      frontierThought(agent, { steps } as RunState, entries, decision);
    const answer = {
      content: 'refund it',
      usage: { inputTokens: 250, outputTokens: 12 },
      model: { id: 'gpt-x', promptVersion: '1' },
      finishReason: 'stop',
      costUsd: 0.002,
    };
    const calls = [
      { callId: 'c1', tool: 'orders.lookup', args: { id: 7 } },
      { callId: 'c2', tool: 'pay.refund', args: { id: 7 } },
    ];
    const rows = buildWaterfall(
      log(
        ['run_requested', { request: { v: 1, runId: 'r1', agent: { kind: 'agent', name: 'refunder' } } }, 0],
        [
          'run_started',
          {
            pinned: { agent: 'refunder', version: '3', promptVersion: '3', provider: 'code', model: 'code' },
          },
        ],
        [
          'thought',
          step(
            0,
            [
              { k: 'now', v: Date.UTC(2026, 0, 1, 12) },
              { k: 'uuid', v: '0b9f7c1e-1111-4222-8333-444455556666' },
              { k: 'random', v: 0.25 },
            ],
            { kind: 'tool_calls', calls },
          ),
        ],
        ['thought', step(1, [{ k: 'model', h: 'abc123', a: answer }], { kind: 'complete', output: 'ok' })],
        ['thought', step(2, [], { kind: 'tool_calls', calls: [calls[0]!] })],
        ['thought', thought],
      ),
    );
    expect(rows[2]).toMatchObject({
      kind: 'code',
      label: 'code refunder: 2 calls',
      facts: [
        'calls orders.lookup, pay.refund',
        'now 2026-01-01T12:00:00.000Z',
        'uuid 0b9f7c1e-1111-4222-8333-444455556666',
        'random 0.25',
      ],
    });
    // A step that asked the model: the model and its tokens (the thought's model id is then the model's).
    expect(rows[3]).toMatchObject({
      kind: 'code',
      label: 'code refunder: completed',
      facts: ['model gpt-x: 250 in / 12 out tokens $0.0020'],
    });
    // A step with no journal at all still reads as code, and shows no tokens.
    expect(rows[4]).toMatchObject({
      kind: 'code',
      label: 'code refunder: 1 call',
      facts: ['calls orders.lookup'],
    });
    for (const row of rows.slice(2, 5)) expect(row.facts.join(' ')).not.toContain('0 in / 0 out');
    // A model's own thought is unchanged.
    expect(rows[5]).toMatchObject({ kind: 'model', label: 'model gpt-x' });
  });

  it('given no events: no rows', () => {
    expect(buildWaterfall([])).toEqual([]);
  });
});

describe('trace links', () => {
  it('takes the trace id of the first event with a W3C traceparent and fills the template', () => {
    const [first, second] = log(['run_started', {}], ['run_started', {}]);
    const traced = {
      ...second!,
      meta: { ...second!.meta, trace: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    };
    const id = traceIdOf([first!, { ...first!, meta: { ...first!.meta, trace: 'garbage' } }, traced]);
    expect(id).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(traceLink('http://jaeger/trace/{traceId}?x={traceId}', id!)).toBe(
      `http://jaeger/trace/${id}?x=${id}`,
    );
    expect(traceIdOf([first!])).toBeUndefined();
  });

  it("numbers a run's events from 1 whatever their stream sequences, and labels one the page does not hold by its sequence", () => {
    const events = log(
      ['run_requested', { request: { v: 1, runId: 'r1', agent: { kind: 'scripted', steps: [] } } }],
      ['run_started', {}],
    ).map((event, i) => ({ ...event, seq: 40 + 3 * i }));
    expect(buildWaterfall(events).map((row) => [row.n, row.seq])).toEqual([
      [1, 40],
      [2, 43],
    ]);
    const numberOf = eventNumbers(events);
    expect([numberOf(40), numberOf(43), numberOf(41)]).toEqual([1, 2, undefined]);
    expect([eventLabel(numberOf, 43), eventLabel(numberOf, 99)]).toEqual(['#2', 'seq 99']);
  });
});

describe('where time travel stands', () => {
  const events = [{ seq: 42 }, { seq: 43 }, { seq: 44 }];

  it("unchosen, at the last event, before the run's state is in as after: the picker does not jump", () => {
    expect(travelPosition(events, 3, true, undefined, undefined)).toEqual({ at: undefined, index: 2 });
    expect(travelPosition(events, 3, true, undefined, 44)).toEqual({ at: 44, index: 2 });
  });

  it("while the events are read, at the state's last event, the last of the count the state gives", () => {
    expect(travelPosition(events.slice(0, 2), 10, false, undefined, 51)).toEqual({ at: 51, index: 9 });
  });

  it('at the chosen event, whatever the state says', () => {
    expect(travelPosition(events, 3, true, 43, 44)).toEqual({ at: 43, index: 1 });
    expect(travelPosition(events, 3, true, 42, undefined)).toEqual({ at: 42, index: 0 });
  });
});
