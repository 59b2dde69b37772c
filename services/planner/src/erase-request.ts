import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { STREAMS } from '@dura/contracts';
import { duraMeter, type Logger } from '@dura/service-kit';
import { DURA_METRICS, declareCounter } from '@dura/telemetry';

/** Erases one message (of `DURA_REQUESTS`, or `DURA_EVENTS`) that held secrets in clear; never throws. */
export type EraseRequest = (seq: number) => Promise<void>;

/** The permission an erase of a message of `stream` needs, as an operator writes it into the planner's user. */
export const erasePermission = (stream: string): string => `$JS.API.STREAM.MSG.DELETE.${stream}`;

/** The permission an erase of a request needs. */
export const ERASE_PERMISSION = erasePermission(STREAMS.requests);

/**
 * Erases messages of `stream` (default `DURA_REQUESTS`; `DURA_EVENTS` for event triggers) by overwriting
 * them (JetStream's secure delete: the bytes on disk are replaced, not only marked deleted). A message
 * already erased (a redelivery after the erase) is fine. Any other failure leaves the secret on the broker's
 * disk until the stream's max age: it is logged as an error naming the stream, the sequence and the
 * permission to grant, and counted (`dura_secret_erase_failures`), but never fails the request, which the
 * log already holds sealed.
 */
export function createRequestEraser(deps: {
  jsm: Pick<JetStreamManager, 'streams'>;
  log: Logger;
  stream?: string;
}): EraseRequest {
  const failures = declareCounter(duraMeter(), DURA_METRICS.secretEraseFailures);
  const stream = deps.stream ?? STREAMS.requests;
  const what = stream === STREAMS.requests ? 'a request' : 'a message';
  return async (seq) => {
    try {
      await deps.jsm.streams.deleteMessage(stream, seq, true);
    } catch (err) {
      if (isAlreadyGone(err)) return;
      failures.add(1, { stream });
      deps.log.error(
        `could not erase ${stream} #${seq}, ${what} holding secrets in clear: it stays on the broker's disk until the stream's max age; grant the planner's NATS user publish on "${erasePermission(stream)}" (deploy/nats/permissions.conf, DURA_PLANNER), then erase it as the admin (nats stream rmm ${stream} ${seq})`,
        { stream, seq, err: (err as Error).message },
      );
    }
  };
}

function isAlreadyGone(err: unknown): boolean {
  return err instanceof JetStreamApiError && /no message found/i.test(err.apiError().description);
}
