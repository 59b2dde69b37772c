import type { EventType } from '@dura/contracts';

/** What a run that has ended still takes: late observations, signals, timers and snapshots. */
export const LATE_EVENT_TYPES: readonly EventType[] = [
  'tool_call_completed',
  'tool_call_failed',
  'child_run_completed',
  'signal_received',
  'timer_fired',
  'snapshot_taken',
];
