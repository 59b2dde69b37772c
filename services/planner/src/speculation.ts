import type { RunEvent } from '@dura/contracts';
import type { CallState } from '@dura/core';
import type { SentEvent } from '@dura/event-store';
import type { RunLoader } from './run-loading';
import type { CachedRun } from './run-state-cache';

/**
 * A run folded with an observation that is sent but not acknowledged, at the sequence it takes if nothing
 * else reaches the stream first: the drive asks the model meanwhile, and the next turn is appended guarded
 * by that sequence and by following the observation, so it lands only if the guess was right.
 */
export interface Speculation {
  /** The run before the observation, as cached. */
  before: CachedRun;
  sent: SentEvent;
  /** The call whose observation it is. */
  calls: readonly CallState[];
}

/** Where a sent event landed, with the event as stored when it landed right behind the run's last one. */
export async function landedEvent(sent: SentEvent): Promise<{ seq: number; event?: RunEvent } | undefined> {
  const landed = await sent.landed();
  if (!landed) return undefined;
  return { seq: landed.seq, ...(landed.followed ? { event: sent.as(landed.seq) } : {}) };
}

/**
 * The run once a speculated observation has landed: folded from the stored event when it landed right
 * behind the run's last event (cached, as a read would give it), else the sequence the next read must
 * reach; undefined when the relay publishes it (its decide task drives the run on).
 */
export async function settleSpeculation(
  speculation: Speculation,
  runs: Pick<RunLoader, 'foldIn'>,
): Promise<{ known: CachedRun } | { through: number } | undefined> {
  const landed = await landedEvent(speculation.sent);
  if (!landed) return undefined;
  const { event } = landed;
  if (!event) return { through: landed.seq };
  return { known: runs.foldIn(speculation.before, [event]) };
}
