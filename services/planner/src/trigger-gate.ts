import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import {
  DuraError,
  SUBJECTS,
  triggerWindowRunId,
  type EventTriggerSpec,
  type JsonValue,
  type RunRequest,
} from '@dura/contracts';
import { BadReference, resolveGateKey } from '@dura/core';
import { gateKeyToken, type RunGates } from '@dura/event-store';
import { duraMeter, failpoint, type Logger } from '@dura/service-kit';
import { DURA_METRICS, declareCounter } from '@dura/telemetry';

/** One event of a trigger with `debounce` or `dedupe`, ready to meet its key's gate. */
export interface GatedEvent {
  spec: EventTriggerSpec;
  /** The trigger's revision: a window remembers it, and starts nothing once the trigger is deleted. */
  revision: number;
  msg: JsMsg;
  input: JsonValue;
  /** The message's id (`Nats-Msg-Id`, else `s<seq>`): its source in logs and in a window's dropped list. */
  source: string;
  /** The run id the event starts at once (`trg-<trigger>-<id>`). */
  runId: string;
  /** The request under a run id, sealed when the trigger's agent takes secrets from its input. */
  request: (runId: string) => RunRequest;
}

/** The gate scope of a trigger's keys: its windows and runs never meet another trigger's or the API's. */
export const triggerScope = (id: string): string => `trigger:${id}`;

/**
 * Debounce and skip-if-running for event triggers: the event's key (the trigger's key template over it) is
 * decided on in `dura_run_gates` by compare-and-set, so every planner replica decides on the same record. A
 * start publishes at once; a debounced event waits in its key's window (the gate pass starts it); a skipped
 * or stale one starts nothing, and says why in the log and the metrics.
 */
export function createTriggerGate(deps: { js: JetStreamClient; gates: RunGates; log: Logger }) {
  const debounced = declareCounter(duraMeter(), DURA_METRICS.gateDebounced);
  const skipped = declareCounter(duraMeter(), DURA_METRICS.gateSkipped);

  return async function gateEvent(event: GatedEvent): Promise<void> {
    const { spec, msg } = event;
    const template = spec.debounce?.key ?? spec.dedupe?.key ?? '';
    let key: string;
    try {
      key = resolveGateKey(template, { input: event.input, subject: msg.subject });
    } catch (err) {
      if (!(err instanceof BadReference)) throw err;
      throw new DuraError(
        'invalid_event',
        `event on ${msg.subject} has no key for trigger ${spec.id} (key "${template}"): ${err.message}`,
      );
    }
    const scope = triggerScope(spec.id);
    const token = gateKeyToken(scope, key);
    const outcome = await deps.gates.arrive({
      scope,
      key,
      request: event.request,
      source: event.source,
      seq: msg.seq,
      runId: event.runId,
      skipIfRunning: spec.dedupe !== undefined,
      ...(spec.debounce
        ? {
            debounce: {
              windowMs: spec.debounce.windowMs,
              windowRunId: (openedAt: number) => triggerWindowRunId(spec.id, token, openedAt.toString(36)),
              triggerRevision: event.revision,
            },
          }
        : {}),
    });
    const where = { trigger: spec.id, key, seq: msg.seq, event: event.source };
    switch (outcome.kind) {
      case 'started':
        await deps.js.publish(SUBJECTS.submit, JSON.stringify(event.request(outcome.runId)), {
          msgID: outcome.runId,
        });
        failpoint('planner.trigger-after-submit');
        return;
      case 'debounced':
        if (outcome.replaced !== undefined) debounced.add(1, { scope });
        deps.log.info('event debounced: its key window starts the run unless a later event replaces it', {
          ...where,
          runId: outcome.runId,
          fireAt: new Date(outcome.fireAt).toISOString(),
          replaced: outcome.replaced,
          events: outcome.events,
        });
        return;
      case 'skipped':
        skipped.add(1, { scope });
        deps.log.info('event not started: a run of its key is in flight (skip-if-running)', {
          ...where,
          running: outcome.runningRunId,
        });
        return;
      case 'stale':
        if (spec.debounce) debounced.add(1, { scope });
        deps.log.info('event not started: a later event of its key was taken already', {
          ...where,
          lastSeq: outcome.lastSeq,
          ...(outcome.counted ? { runId: outcome.counted.runId, events: outcome.counted.events } : {}),
        });
    }
  };
}
