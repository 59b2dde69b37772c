import type { NatsConnection } from '@nats-io/nats-core';
import { z } from 'zod';
import { liveSubject } from '@dura/contracts';

/** A piece of a model's answer while it streams; ephemeral (core NATS), never part of the record. */
export interface LiveDelta {
  /** Which model call of the run (counts from 0). */
  decision: number;
  delta: string;
}

const LiveMessageSchema = z.object({ decision: z.number().int().nonnegative(), delta: z.string() });

/**
 * Calls `onDelta` for each token delta published on the run's live subject until `signal` aborts; resolves
 * once the subscription is in place (deltas sent before that are not seen: they are not stored anywhere).
 */
export async function subscribeLive(
  nc: NatsConnection,
  runId: string,
  onDelta: (delta: LiveDelta) => void,
  signal: AbortSignal,
): Promise<void> {
  const sub = nc.subscribe(liveSubject(runId), {
    callback: (err, msg) => {
      if (err) return;
      let value: unknown;
      try {
        value = msg.json();
      } catch {
        return; // not ours to interpret: the subject is open to any publisher with the right
      }
      const parsed = LiveMessageSchema.safeParse(value);
      if (parsed.success) onDelta(parsed.data);
    },
  });
  signal.addEventListener('abort', () => sub.unsubscribe(), { once: true });
  await nc.flush();
}
