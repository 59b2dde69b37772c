// The HTTP command door: every write route of the API (submit, signals and cancel, fork, events, chat turns,
// schedules, triggers) checks its caller, then writes through here. The projector never writes a run's state: it
// publishes commands to JetStream intakes (and schedule and trigger definitions to their buckets), and the planner,
// which owns the run logs, decides what they mean. One path, so a write NATS refuses reads the same on every route.
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
 * server denies, or never acknowledges, becomes a `StreamUnavailable` that says so and gives the door's one hint
 * (`doorHint`); any other failure goes through `otherwise` (default: thrown as it is).
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
      throw doorFailure(target, `NATS denied the projector's user publishing to "${violation.subject}"`, err);
    // A publish the server drops for want of permission may only show as a missing acknowledgement.
    if (err instanceof TimeoutError)
      throw doorFailure(target, `NATS did not acknowledge the write to "${target.subject}" in time`, err);
    throw otherwise(err);
  }
}

/** The HTTP door's one answer to a write that NATS refused or left unanswered: what went wrong, what to do. */
function doorFailure(target: DoorTarget, wrong: string, cause: unknown): StreamUnavailable {
  return new StreamUnavailable(
    `${wrong}, so ${target.what} was not accepted: ${doorHint(target.subject)}`,
    cause,
  );
}

/** What an operator does about a failed door write: the permission to check, then a retry that is safe. */
export function doorHint(subject: string): string {
  return (
    `check that the projector's NATS user may publish to "${subject}" (the write door of DURA_PROJECTOR in ` +
    'deploy/nats/permissions.conf; docs/security/nats.md), then retry the same request (it is deduplicated)'
  );
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
