import type { JetStreamManager } from '@nats-io/jetstream';
import * as z from 'zod';
import { BUCKETS } from '@dura/contracts';
import { getKvMessage, isJsApiError, JS_CODES } from '@dura/event-store';

/** Why a run that says `running` makes no progress: no planner serves the agent version it is pinned to. */
export interface Parked {
  agent: string;
  version: string;
  afterSeq: number;
}

const ParkedEntrySchema = z.object({
  pinned: z.object({ agent: z.string(), version: z.string() }),
  afterSeq: z.number().int().nonnegative(),
});

/** The run's entry in the parked-runs bucket (read as a message get: the client creates no KV watcher). */
export async function readParked(jsm: JetStreamManager, runId: string): Promise<Parked | undefined> {
  let message;
  try {
    message = await getKvMessage(jsm, BUCKETS.parked, runId);
  } catch (err) {
    // No bucket yet: nothing was ever parked.
    if (isJsApiError(err, JS_CODES.streamNotFound)) return undefined;
    throw err;
  }
  if (!message) return undefined; // deleted: picked up by a planner
  const parsed = ParkedEntrySchema.safeParse(message.json());
  if (!parsed.success) return undefined;
  return { ...parsed.data.pinned, afterSeq: parsed.data.afterSeq };
}
