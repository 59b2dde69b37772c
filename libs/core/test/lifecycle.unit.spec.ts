import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { EVENT_TYPES, type EventType, type RunEvent } from '@dura/contracts';
import {
  ALLOWED_FROM,
  STATUS_AFTER,
  TERMINAL_STATUSES,
  canApply,
  evolve,
  fold,
  initialRunState,
  isTerminal,
  type RunStatus,
} from '../src/index';
import { RunLog, arbValidHistory, given, requestedData, thoughtData } from '../src/testing';
import { LATE_EVENT_TYPES } from './late-events';

const STATUSES: RunStatus[] = [
  'none',
  'pending',
  'running',
  'waiting',
  'completed',
  'failed',
  'cancelled',
  'rejected',
];
const STARTED: RunStatus[] = ['running', 'waiting', 'completed', 'failed', 'cancelled'];

/** The lifecycle written out by hand: `pending → running ⇄ waiting → completed | failed | cancelled`. */
const EXPECTED_ALLOWED: Record<EventType, RunStatus[]> = {
  run_requested: ['none'],
  run_rejected: ['none', 'pending'],
  run_started: ['pending'],
  thought: ['running'],
  budget_reserved: ['running'],
  context_summarized: ['running'],
  tool_call_requested: ['running'],
  tool_call_completed: STARTED,
  tool_call_failed: STARTED,
  wait_requested: ['running', 'waiting'],
  signal_received: STARTED,
  timer_fired: STARTED,
  child_run_requested: ['running', 'waiting'],
  child_run_completed: STARTED,
  snapshot_taken: ['pending', ...STARTED],
  budget_exceeded: ['running', 'waiting'],
  run_completed: ['running'],
  run_failed: ['pending', 'running', 'waiting'],
  run_cancelled: ['pending', 'running', 'waiting'],
};

/** The only status changes the lifecycle has (besides staying put). */
const EDGES = new Set([
  'none→pending',
  'none→rejected',
  'pending→rejected',
  'pending→running',
  'pending→failed',
  'pending→cancelled',
  'running→waiting',
  'waiting→running',
  'running→completed',
  'running→failed',
  'running→cancelled',
  'waiting→failed',
  'waiting→cancelled',
]);

describe('ALLOWED_FROM', () => {
  it('covers every event type', () => {
    expect(Object.keys(ALLOWED_FROM).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it.each(EVENT_TYPES)('%s may follow exactly the statuses of the lifecycle', (type) => {
    expect([...ALLOWED_FROM[type]].sort()).toEqual([...EXPECTED_ALLOWED[type]].sort());
    for (const status of STATUSES)
      expect(canApply(type, status)).toBe(EXPECTED_ALLOWED[type].includes(status));
  });

  it.each(TERMINAL_STATUSES)(
    'a %s run accepts only late observations, signals, timers and snapshots, which keep it there',
    (status) => {
      const allowed = EVENT_TYPES.filter((type) => canApply(type, status));
      for (const type of allowed) {
        expect(LATE_EVENT_TYPES).toContain(type);
        expect(STATUS_AFTER[type]).toBeUndefined();
      }
    },
  );
});

describe('status after each event', () => {
  const requested = () => new RunLog().request();
  const running = () => requested().start();
  const waiting = (signal = 'approve') =>
    running().add('wait_requested', { waitId: 'w', kind: 'signal', signal });
  const error = { code: 'x', message: 'x' };

  const table: [string, RunLog, (log: RunLog) => RunEvent, RunStatus][] = [
    ['run_requested', new RunLog(), (l) => l.next('run_requested', requestedData('run-1')), 'pending'],
    ['run_rejected at intake', new RunLog(), (l) => l.next('run_rejected', { error }), 'rejected'],
    ['run_rejected after request', requested(), (l) => l.next('run_rejected', { error }), 'rejected'],
    ['run_started', requested(), (l) => l.next('run_started', {}), 'running'],
    ['run_failed while pending', requested(), (l) => l.next('run_failed', { error }), 'failed'],
    [
      'run_cancelled while pending',
      requested(),
      (l) => l.next('run_cancelled', { reason: 'r' }),
      'cancelled',
    ],
    ['snapshot_taken while pending', requested(), (l) => l.next('snapshot_taken', { atSeq: 1 }), 'pending'],
    ['thought', running(), (l) => l.next('thought', thoughtData({ kind: 'complete' })), 'running'],
    ['wait_requested', running(), (l) => l.next('wait_requested', { waitId: 'w', kind: 'timer' }), 'waiting'],
    [
      'budget_exceeded',
      running(),
      (l) => l.next('budget_exceeded', { budget: 'cost', limit: 1, used: 2 }),
      'running',
    ],
    ['run_completed', running(), (l) => l.next('run_completed', {}), 'completed'],
    ['run_failed while running', running(), (l) => l.next('run_failed', { error }), 'failed'],
    ['run_cancelled while running', running(), (l) => l.next('run_cancelled', { reason: 'r' }), 'cancelled'],
    [
      'the awaited signal',
      waiting(),
      (l) => l.next('signal_received', { signalId: 's', name: 'approve' }),
      'running',
    ],
    [
      'another signal',
      waiting(),
      (l) => l.next('signal_received', { signalId: 's', name: 'other' }),
      'waiting',
    ],
    [
      'a signal while running',
      running(),
      (l) => l.next('signal_received', { signalId: 's', name: 'approve' }),
      'running',
    ],
    ['a timer of no wait', waiting(), (l) => l.next('timer_fired', { waitId: 'nope' }), 'waiting'],
    ['run_failed while waiting', waiting(), (l) => l.next('run_failed', { error }), 'failed'],
    ['run_cancelled while waiting', waiting(), (l) => l.next('run_cancelled', { reason: 'r' }), 'cancelled'],
    [
      'budget_exceeded while waiting',
      waiting(),
      (l) => l.next('budget_exceeded', { budget: 'time', limit: 1, used: 2 }),
      'waiting',
    ],
  ];

  it.each(table)('%s → %s', (_name, history, event, status) => {
    given(history.events).when(event(history)).then({ status });
  });

  it('walks pending → running ⇄ waiting → completed', () => {
    const log = new RunLog().request().start();
    for (const round of [1, 2]) {
      log
        .add('wait_requested', { waitId: `w${round}`, kind: 'timer', until: 'soon' })
        .add('timer_fired', { waitId: `w${round}` });
    }
    log.finish();
    const statuses = log.events.reduce<RunStatus[]>(
      (seen, event, i) => [...seen, fold(log.events.slice(0, i + 1)).status],
      [],
    );
    expect(statuses).toEqual([
      'pending',
      'running',
      'waiting',
      'running',
      'waiting',
      'running',
      'running',
      'completed',
    ]);
  });

  it('moves only along the edges of the lifecycle in every generated history', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        let state = initialRunState();
        for (const event of events) {
          const next = evolve(state, event);
          if (next.status !== state.status) expect(EDGES).toContain(`${state.status}→${next.status}`);
          const moved = STATUS_AFTER[event.type];
          if (moved !== undefined) expect(next.status).toBe(moved);
          state = next;
        }
      }),
      { numRuns: 200 },
    );
  });

  it('knows the terminal statuses', () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual(['cancelled', 'completed', 'failed', 'rejected']);
    expect(STATUSES.filter(isTerminal)).toEqual(['completed', 'failed', 'cancelled', 'rejected']);
  });
});
