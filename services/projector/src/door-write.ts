import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import { PermissionViolationError, TimeoutError } from '@nats-io/nats-core';
import { mapAppendError, StreamUnavailable } from '@dura/event-store';
import { DURA_ATTRS, withProducerSpan } from '@dura/telemetry';
import { trace } from '@opentelemetry/api';

/** Where a write of the HTTP door goes, and what it is, for the error that says why it failed. */
export interface DoorTarget {
  /** The subject (or subject pattern) the projector's NATS user must be allowed to publish to. */
  subject: string;
  /** What was written, as the error names it: "the request of run r1", "the schedule change". */
  what: string;
}

/**
 * Runs one NATS write of the HTTP door (a command published after the route checked its caller). A write the
 * server denies, or never acknowledges, becomes a `StreamUnavailable` naming the subject and the permission
 * set to check; any other failure goes through `otherwise` (default: thrown as it is).
 */
export async function doorWrite<T>(
  target: DoorTarget,
  write: () => Promise<T>,
  otherwise: (err: unknown) => unknown = (err) => err,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const violation = permissionViolationIn(err);
    if (violation)
      throw new StreamUnavailable(
        `NATS denied the projector's user publishing to "${violation.subject}", so ${target.what} was not ` +
          `sent: the projector serves this route only if its user may publish to "${target.subject}" (the ` +
          'write door of DURA_PROJECTOR in deploy/nats/permissions.conf allows it; docs/security/nats.md)',
        err,
      );
    // A publish the server drops for want of permission may only show as a missing acknowledgement.
    if (err instanceof TimeoutError)
      throw new StreamUnavailable(
        `${target.what} was not acknowledged in time on "${target.subject}": retry the same request (it is ` +
          `deduplicated); if it keeps failing, check that the projector's NATS user may publish to ` +
          `"${target.subject}" (DURA_PROJECTOR in deploy/nats/permissions.conf allows it)`,
        err,
      );
    throw otherwise(err);
  }
}

/**
 * Publishes a command of the HTTP door to its intake with its msg-id, in a producer span; see `doorWrite`.
 * `runId` is the run it is about, when there is one (an event names none: its triggers start runs).
 */
export function publishCommand(
  js: JetStreamClient,
  command: { subject: string; body: unknown; msgID: string; runId?: string; what: string },
): Promise<PubAck> {
  const { subject, msgID, runId } = command;
  return doorWrite(
    { subject, what: command.what },
    () =>
      withProducerSpan(
        trace.getTracer('dura-projector'),
        {
          destination: subject,
          messageId: msgID,
          attributes: runId === undefined ? {} : { [DURA_ATTRS.runId]: runId },
        },
        (headers) => js.publish(subject, JSON.stringify(command.body), { msgID, headers }),
      ),
    (err) => mapAppendError(err, runId ?? subject, undefined),
  );
}

function permissionViolationIn(err: unknown): PermissionViolationError | undefined {
  // nats.js wraps a denied request's violation in a RequestError: look through the causes.
  for (let cause = err, depth = 0; depth < 4 && cause instanceof Error; depth++, cause = cause.cause)
    if (cause instanceof PermissionViolationError) return cause;
  return undefined;
}
