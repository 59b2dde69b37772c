import type { EventType } from '@dura/contracts';

/** The events that end a run: a watch that follows it to its end stops after one of these. */
export const TERMINAL_EVENTS: ReadonlySet<EventType> = new Set([
  'run_completed',
  'run_failed',
  'run_cancelled',
  'run_rejected',
]);
