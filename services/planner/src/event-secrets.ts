import type { JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { STREAMS, type EventTriggerRecord, type JsonValue, type RunRequest } from '@dura/contracts';
import type { Logger } from '@dura/service-kit';
import type { EraseRequest } from './erase-request';

type Request = RunRequest & { runId: string };

/** What an event trigger does about the secrets an event may hold (the planner wires the intake's own). */
export interface EventSecretPorts {
  /** The request with the secrets of its input sealed; throws when they cannot be (no key). */
  seal: (request: Request) => Request;
  /** A request body with its secrets replaced by `"[secret]"`, or the body itself when it holds none. */
  redact: <T>(body: T) => T;
  /** Erases a message of DURA_EVENTS; never throws (a failure is its own error log and metric). */
  erase: EraseRequest;
}

/** Whether a NATS subject filter (`*`: one token, `>`: the rest) matches a subject. */
export function subjectMatches(filter: string, subject: string): boolean {
  const want = filter.split('.');
  const got = subject.split('.');
  for (let i = 0; i < want.length; i += 1) {
    if (want[i] === '>') return got.length > i;
    if (i >= got.length || (want[i] !== '*' && want[i] !== got[i])) return false;
  }
  return want.length === got.length;
}

/**
 * Keeps an event's secrets out of clear storage: the run request a trigger makes of it is sealed before it
 * goes to `dura.submit`, the event is erased from DURA_EVENTS once no other trigger still needs it, and a
 * dead letter of it keeps its secrets redacted.
 */
export function createEventSecrets(deps: {
  ports: EventSecretPorts;
  jsm: Pick<JetStreamManager, 'consumers'>;
  /** Every trigger now defined (a trigger on the same subject may still have to read the event). */
  triggers: () => Promise<EventTriggerRecord[]>;
  consumerOf: (id: string) => string;
  log: Logger;
}) {
  const { ports } = deps;

  /**
   * The request to publish, and whether the event held secrets in clear. One that cannot be sealed here goes
   * as it is: the intake refuses it with the reason, redacts its dead letter and erases it.
   */
  function prepare(request: Request): { request: Request; held: boolean } {
    if (ports.redact(request) === request) return { request, held: false };
    try {
      return { request: ports.seal(request), held: true };
    } catch (err) {
      deps.log.warn('an event holding secrets cannot be sealed here; the intake refuses it', {
        runId: request.runId,
        err,
      });
      return { request, held: true };
    }
  }

  /** Triggers other than `record` that match the event and have not acknowledged it yet. */
  async function stillNeededBy(msg: JsMsg, record: EventTriggerRecord): Promise<string[]> {
    const published = msg.info.timestampNanos / 1e6;
    const others = (await deps.triggers()).filter(
      (other) =>
        other.spec.id !== record.spec.id &&
        subjectMatches(other.spec.subject, msg.subject) &&
        // A trigger created after the event never reads it.
        other.createdAt <= published,
    );
    const pending: string[] = [];
    for (const other of others) {
      const info = await deps.jsm.consumers
        .info(STREAMS.events, deps.consumerOf(other.spec.id))
        .catch(() => undefined);
      if (!info || info.ack_floor.stream_seq < msg.seq) pending.push(other.spec.id);
    }
    return pending;
  }

  /** Erases an event that held secrets, unless another trigger still has to read it (then it says so). */
  async function erase(msg: JsMsg, record: EventTriggerRecord): Promise<void> {
    const pending = await stillNeededBy(msg, record);
    if (pending.length === 0) return ports.erase(msg.seq);
    deps.log.error(
      `${STREAMS.events} #${msg.seq} holds secrets in clear and is not erased: triggers ${pending.join(', ')} also read ${msg.subject} and have not yet; it stays until the stream's max age. Give events with secrets a subject only one trigger reads`,
      { trigger: record.spec.id, seq: msg.seq, subject: msg.subject },
    );
  }

  /** What a dead letter of the event keeps instead of its bytes, for a trigger whose runs take it as input. */
  function deadLetter(
    msg: JsMsg,
    record: EventTriggerRecord,
  ): { payload: Uint8Array; erase: () => Promise<void> } | undefined {
    let input: JsonValue;
    try {
      input = JSON.parse(msg.string()) as JsonValue;
    } catch {
      input = msg.string();
    }
    const body = { ...record.spec.request, input };
    const redacted = ports.redact(body);
    if (redacted === body) return undefined;
    return {
      payload: new TextEncoder().encode(JSON.stringify(redacted.input)),
      erase: () => erase(msg, record),
    };
  }

  return { prepare, erase, deadLetter };
}

export type EventSecrets = ReturnType<typeof createEventSecrets>;
