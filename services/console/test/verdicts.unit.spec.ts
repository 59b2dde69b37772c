import { describe, expect, it } from 'vitest';
import { newEvent, type EventData, type EventType, type RunEvent } from '@dura/contracts';
import { buildWaterfall } from '../src/model/waterfall';
import { verdictAnswers } from '../src/model/verdicts';

/** A run's events, a second apart, with their seqs stamped as a reader sees them. */
function log(...drafts: [EventType, unknown][]): RunEvent[] {
  return drafts.map(([type, data], i) => {
    const event = newEvent(type, data as EventData<typeof type>, {
      id: `e${i}`,
      runId: 'r1',
      ts: new Date(Date.UTC(2026, 0, 1, 12, 0, i)).toISOString(),
      correlationId: 'r1',
    });
    return { ...event, seq: i + 1 };
  });
}

const FULL_TIME = /^at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const call = (callId: string) =>
  [
    'tool_call_requested',
    { callId, step: 1, tool: 'pay.charge', args: { amount: 5 }, idempotencyKey: `k-${callId}` },
  ] as [EventType, unknown];
const approvalWait = (callId: string) =>
  [
    'wait_requested',
    {
      waitId: `approval:${callId}`,
      kind: 'approval',
      signal: 'approve',
      callId,
      timeoutAt: '2026-01-01T13:00:00Z',
      onTimeout: 'reject',
    },
  ] as [EventType, unknown];

describe('answers to approvals on the waterfall', () => {
  it('given an approved call: its row and its wait say approved, by which signal, when in full', () => {
    const rows = buildWaterfall(
      log(['run_started', {}], call('c1'), approvalWait('c1'), [
        'signal_received',
        { signalId: 'sig-1', name: 'approve', payload: { callId: 'c1', approved: true } },
      ]),
    );
    for (const row of [rows[1]!, rows[2]!]) {
      expect(row.facts[0]).toBe('approved by signal approve sig-1');
      expect(row.facts[1]).toMatch(FULL_TIME);
    }
    expect(rows[2]!.facts).toContainEqual(expect.stringMatching(/^deadline \d{4}-.*: reject$/));
  });

  it('given a rejection naming no call: the oldest approval wait is rejected, with the reason', () => {
    const answers = verdictAnswers(
      log(call('c1'), approvalWait('c1'), call('c2'), approvalWait('c2'), [
        'signal_received',
        { signalId: 'sig-2', name: 'reject', payload: { reason: 'too much' } },
      ]),
    );
    expect([...answers.keys()]).toEqual(['c1']);
    expect(answers.get('c1')).toMatchObject({
      approved: false,
      signalId: 'sig-2',
      reason: 'a human rejected it: too much',
    });
  });

  it('given a ctx.approve wait answered with anything but {approved: true}: a refusal naming what it got', () => {
    const rows = buildWaterfall(
      log(
        [
          'wait_requested',
          { waitId: 'signal:c3', kind: 'signal', signal: 'publish', callId: 'c3', approval: true },
        ],
        ['signal_received', { signalId: 'sig-3', name: 'publish', payload: { approved: 'yes' } }],
      ),
    );
    expect(rows[0]!.facts[0]).toBe('rejected by signal publish sig-3');
    expect(rows[0]!.facts[2]).toMatch(/^reason: approval signal 'publish' carried \{"approved":"yes"\}/);
  });

  it('given a plain signal wait, or a wait nobody answered in time: no verdict, or the timeout and its outcome', () => {
    const plain = verdictAnswers(
      log(
        ['wait_requested', { waitId: 'signal:c4', kind: 'signal', signal: 'go', callId: 'c4' }],
        ['signal_received', { signalId: 'sig-4', name: 'go', payload: { approved: true } }],
      ),
    );
    expect(plain.size).toBe(0);
    const rows = buildWaterfall(
      log(call('c5'), approvalWait('c5'), ['timer_fired', { waitId: 'approval:c5' }]),
    );
    expect(rows[0]!.facts.slice(0, 2)).toEqual([
      expect.stringMatching(/^nobody answered by \d{4}-/),
      'timed out: reject',
    ]);
  });
});
