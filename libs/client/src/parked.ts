import type { JetStreamManager } from '@nats-io/jetstream';
import * as z from 'zod';
import { BUCKETS } from '@dura/contracts';
import { isJsApiError, JS_CODES } from '@dura/event-store';

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
    message = await jsm.streams.getMessage(`KV_${BUCKETS.parked}`, {
      last_by_subj: `$KV.${BUCKETS.parked}.${runId}`,
    });
  } catch (err) {
    // No bucket yet: nothing was ever parked.
    if (isJsApiError(err, JS_CODES.streamNotFound)) return undefined;
    throw err;
  }
  if (!message || message.data.length === 0) return undefined; // deleted: picked up by a planner
  const operation = message.header?.get('KV-Operation');
  if (operation === 'DEL' || operation === 'PURGE') return undefined;
  const parsed = ParkedEntrySchema.safeParse(message.json());
  if (!parsed.success) return undefined;
  return { ...parsed.data.pinned, afterSeq: parsed.data.afterSeq };
}
