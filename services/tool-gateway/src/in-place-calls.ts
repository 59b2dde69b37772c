import type { JetStreamClient } from '@nats-io/jetstream';
import { runSubject, type NewEvent, type RunEvent, type ToolTask } from '@dura/contracts';
import { decodeStored, type SentEvent } from '@dura/event-store';
import { duraMeter, RetryLater, type Logger } from '@dura/service-kit';
import { declareCounter } from '@dura/telemetry';
import type { ToolRegistry } from '@dura/tools';
import { leftToRelay, type CallRoute } from './call-route';
import type { Finished } from './effect-ledger';
import { createObservationPublisher, type SentObservation } from './outbox-publish';
import { OBSERVATIONS_PUBLISHED, type Relay } from './relay';
import type { ToolCalls } from './tool-call';

const UTF8 = new TextEncoder();

/**
 * What a call run in place (`runLocal`, inside the planner's drive of its run) left for that drive. The
 * drive folds the observation and goes on; when the relay publishes it instead, the relay's decide task
 * drives the run on.
 */
export interface LocalCallOutcome {
  /** The observation's sequence in its run's log, when this process published it; unset: the relay does. */
  seq?: number;
  /** The observation as stored, when it landed right behind the sequence the caller gave (`after`). */
  event?: RunEvent;
  /** `event`'s bytes as the log stored them (what a direct call's reply carries). */
  stored?: Uint8Array;
  /** The attempt failed and the call is to be retried after this many ms (its observation says so). */
  retryAfterMs?: number;
  /**
   * With `speculate`: the observation is on its way to the log, not yet acknowledged (`seq` and `event` stay
   * unset). `as(seq)` is the event as the log stores it at `seq`; `landed` settles with its sequence (and the
   * event, when it landed right behind `after`), or undefined when the relay publishes it instead.
   */
  sent?: SentEvent;
}

export interface InPlaceCallOptions {
  /** The run's last sequence as the drive knows it. */
  after?: number;
  /** The drive running the call recorded its intent itself, a moment ago: no other attempt can have begun. */
  fresh?: boolean;
  /** Hand the observation back as soon as it is sent, before its ack (`LocalCallOutcome.sent`); needs `after`. */
  speculate?: boolean;
}

/**
 * Calls run in this process for a planner in the same process that drives the call's run (the worker): no
 * tool task, no decide task. The observation is published without a nudge, and what the drive needs to go
 * on is handed back (`LocalCallOutcome`).
 */
export function createInPlaceCalls(parts: {
  tools: ToolRegistry;
  toolConcurrency: Record<string, number> | undefined;
  relay: Relay;
  calls: ToolCalls;
  js: JetStreamClient;
  log: Logger;
}) {
  const { relay, log } = parts;
  const publish = createObservationPublisher(parts.js);
  const published = declareCounter(duraMeter(), OBSERVATIONS_PUBLISHED);

  /** The route of one call run in place: its observation is published for the drive, not the planner. */
  function inPlaceRoute(options: InPlaceCallOptions, outcome: LocalCallOutcome): CallRoute {
    const { after } = options;
    const guard = after === undefined ? {} : { after };
    /** Publishes the observation (`send`), or hands it back unacknowledged to a speculating drive. */
    async function hand(payload: NewEvent, send: () => Promise<SentObservation | undefined>): Promise<void> {
      if (options.speculate && after !== undefined) {
        outcome.sent = sendSoon(payload, send);
        return;
      }
      const sent = await send();
      if (!sent) return;
      outcome.seq = sent.seq;
      if (sent.followed) {
        outcome.event = decodeStored({ seq: sent.seq, data: sent.followed });
        outcome.stored = sent.followed;
      }
    }

    return {
      readCancellation: false,
      async deliver(finished) {
        if (leftToRelay(finished, relay) || !finished.queued) return;
        const queued = finished.queued;
        await hand(queued.payload, () => relay.sendNow(queued, { nudge: false, ...guard }));
      },
      // The drive recorded the intent a moment ago and runs the call itself: the observation goes straight to
      // the log. Should that publish fail, the row and its outbox row are written after all, and the relay
      // publishes what this process could not.
      async sendUnrecorded(observation, record) {
        let conflict = false;
        const runId = observation.meta.runId;
        const row = { runId, msgId: observation.meta.id, subject: runSubject(runId), payload: observation };
        const send = async (): Promise<SentObservation | undefined> => {
          try {
            const sent = await publish(row, false, after);
            published.add(1, { path: 'unrecorded' });
            return sent;
          } catch (err) {
            log.warn('publishing the result of a read-only call failed; recording it for the relay', {
              runId,
              err,
            });
          }
          const finished: Finished = await record();
          conflict = finished.conflict === true;
          if (leftToRelay(finished, relay) || !finished.queued) return undefined;
          return relay.sendNow(finished.queued, { nudge: false, ...guard });
        };
        await hand(observation, send);
        return !conflict;
      },
    };
  }

  /** Whether `run` takes calls of this tool: one this gateway has, with no limit across replicas. */
  function runs(toolName: string): boolean {
    const tool = parts.tools.get(toolName);
    return tool !== undefined && (parts.toolConcurrency?.[toolName] ?? tool.concurrency) === undefined;
  }

  /**
   * Runs a call in this process, as a tool task would (claim, effect, result and observation committed,
   * observation published). The log holds the call's intent, so a crash here leaves what a crashed gateway
   * leaves: the driving message comes again and the ledger settles the call. A retryable failure is
   * reported, not thrown.
   */
  async function run(task: ToolTask, options: InPlaceCallOptions = {}): Promise<LocalCallOutcome> {
    const outcome: LocalCallOutcome = {};
    try {
      await parts.calls.run(task, inPlaceRoute(options, outcome), options.fresh === true);
    } catch (err) {
      if (!(err instanceof RetryLater) || err.requeue) throw err;
      outcome.retryAfterMs = err.delayMs;
    }
    return outcome;
  }

  return { runs, run, publishesWith: parts.js };
}

/**
 * An observation handed back before it is published: `send()` publishes it, and so does the next turn of
 * the event loop when nobody did by then, so a slow model never holds it back. A drive that has its next
 * turn ready at once sends both in one socket write.
 */
function sendSoon(payload: NewEvent, publish: () => Promise<SentObservation | undefined>): SentEvent {
  let landed: Promise<{ seq: number; followed: boolean } | undefined> | undefined;
  let bytes: Uint8Array | undefined;
  const send = () =>
    (landed ??= publish().then(
      (sent) => sent && { seq: sent.seq, followed: sent.followed !== undefined },
      () => undefined,
    ));
  const soon = setImmediate(() => void send());
  return {
    id: payload.meta.id,
    as: (seq) => decodeStored({ seq, data: (bytes ??= UTF8.encode(JSON.stringify(payload))) }),
    send: () => {
      clearImmediate(soon);
      void send();
    },
    landed: () => {
      clearImmediate(soon);
      return send();
    },
  };
}
