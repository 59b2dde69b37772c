import type { EventType } from '@dura/contracts';
import type { RunStatus } from './run-state';

const LIVE: readonly RunStatus[] = ['running', 'waiting'];
const STARTED: readonly RunStatus[] = ['running', 'waiting', 'completed', 'failed', 'cancelled'];
const NOT_TERMINAL: readonly RunStatus[] = ['pending', 'running', 'waiting'];

/**
 * The run lifecycle: `pending → running ⇄ waiting → completed | failed | cancelled` (and `rejected` at intake).
 * Each event type lists the statuses it may follow. Observations may arrive after the run ended
 * (a tool finishing after a cancel); they are recorded, never refused.
 */
export const ALLOWED_FROM: Record<EventType, readonly RunStatus[]> = {
  run_requested: ['none'],
  run_rejected: ['none', 'pending'],
  run_started: ['pending'],
  thought: ['running'],
  budget_reserved: ['running'],
  context_summarized: ['running'],
  tool_call_requested: ['running'],
  tool_call_completed: STARTED,
  tool_call_failed: STARTED,
  wait_requested: LIVE,
  // Signals, timers and children may report after the run ended (a late timer, a child cancelled with its
  // parent); they are recorded and change nothing.
  signal_received: STARTED,
  timer_fired: STARTED,
  // Several `dura.run_agent` calls of one decision start their children one after another: the first child's
  // wait makes the run `waiting` before the next child is requested (evolve checks each names its call).
  child_run_requested: LIVE,
  child_run_completed: STARTED,
  snapshot_taken: ['pending', ...STARTED],
  budget_exceeded: LIVE,
  run_completed: ['running'],
  run_failed: NOT_TERMINAL,
  run_cancelled: NOT_TERMINAL,
};

/** Status after the event, for the events that move the lifecycle; others keep the status. */
export const STATUS_AFTER: Partial<Record<EventType, RunStatus>> = {
  run_requested: 'pending',
  run_rejected: 'rejected',
  run_started: 'running',
  run_completed: 'completed',
  run_failed: 'failed',
  run_cancelled: 'cancelled',
};

export function canApply(type: EventType, status: RunStatus): boolean {
  return ALLOWED_FROM[type].includes(status);
}
