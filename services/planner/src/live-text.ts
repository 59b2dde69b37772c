import type { JetStreamClient } from '@nats-io/jetstream';
import type { LiveText } from '@dura/contracts';
import { createLiveTokens } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';

/**
 * The decision's live model text, to `DURA_TOKENS` off the decision's path; each drive asks as a new attempt,
 * so a reader drops what a crashed or superseded drive streamed.
 */
export function liveTextFor(
  deps: { js: JetStreamClient; log: Logger },
  runId: string,
  decision: number,
): LiveText {
  return createLiveTokens(deps.js, runId, decision, {
    onLost: (attempt, err) =>
      deps.log.warn('live model text could not be stored; its readers are told of the gap', {
        runId,
        decision,
        attempt,
        err,
      }),
  });
}
