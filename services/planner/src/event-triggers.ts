import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import {
  decodeMessage,
  DuraError,
  JsonValueSchema,
  RUN_REQUEST_VERSION,
  RunRequestSchema,
  STREAMS,
  SUBJECTS,
  triggerRunId,
  type EventTriggerRecord,
  type JsonValue,
} from '@dura/contracts';
import { createTriggerStore, isJsApiError, JS_CODES } from '@dura/event-store';
import { failpoint, startConsumerLoop, type ConsumerLoop, type Logger } from '@dura/service-kit';
import { createEventSecrets, type EventSecretPorts } from './event-secrets';

export interface EventTriggerDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  log: Logger;
  /** How often the triggers bucket is read for added or removed triggers (default 1 s). */
  pollMs?: number;
  ackWaitMs?: number;
  replicas?: number;
  duplicateWindowMs?: number;
  /**
   * Keeps events' secrets out of clear storage (the intake's sealing and redaction, and an eraser of
   * DURA_EVENTS messages); unset: events are taken as they are.
   */
  secrets?: EventSecretPorts;
}

export const EVENTS_DLQ_SOURCE = 'events';
const MAX_DELIVER = 10;
const DAY_MS = 86_400_000;

/** Durable consumer name of a trigger (one per trigger, shared by every planner replica). */
export const triggerConsumer = (id: string): string => `trigger-${id}`;

/**
 * Event triggers: each message on a trigger's subject (stream DURA_EVENTS, `dura.event.>`) becomes a run
 * request on `dura.submit`, with the message as input and the trigger's tenant, so the intake applies the
 * same tenant limits and tool authorization as to any request. The run id comes from the message's
 * `Nats-Msg-Id` (else its stream sequence): a redelivered or republished message joins the same run. An event
 * holding secrets where the trigger's agent takes them (`secrets`) goes to `dura.submit` sealed and is
 * erased from DURA_EVENTS; its dead letter keeps them redacted.
 */
export function createEventTriggers(deps: EventTriggerDeps) {
  const store = createTriggerStore({ js: deps.js, ...(deps.replicas ? { replicas: deps.replicas } : {}) });
  const bound = new Map<string, ConsumerLoop>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const secrets = deps.secrets
    ? createEventSecrets({
        ports: deps.secrets,
        jsm: deps.jsm,
        triggers: () => store.list(),
        consumerOf: triggerConsumer,
        log: deps.log,
      })
    : undefined;

  async function ensureEventsStream(): Promise<void> {
    const config = {
      name: STREAMS.events,
      subjects: [SUBJECTS.allEvents],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: deps.replicas ?? 1,
      duplicate_window: nanos(deps.duplicateWindowMs ?? 120_000),
      discard: DiscardPolicy.Old,
      max_age: nanos(7 * DAY_MS),
      max_consumers: 256,
    };
    try {
      await deps.jsm.streams.info(STREAMS.events);
    } catch (err) {
      if (!isJsApiError(err, JS_CODES.streamNotFound)) throw err;
      await deps.jsm.streams.add(config);
    }
  }

  async function ensureConsumer(record: EventTriggerRecord): Promise<void> {
    const durable = triggerConsumer(record.spec.id);
    try {
      await deps.jsm.consumers.info(STREAMS.events, durable);
    } catch (err) {
      if (!isJsApiError(err, JS_CODES.consumerNotFound)) throw err;
      // From the trigger's creation on: messages published before it existed are not its business.
      await deps.jsm.consumers.add(STREAMS.events, {
        durable_name: durable,
        filter_subject: record.spec.subject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.StartTime,
        opt_start_time: new Date(record.createdAt).toISOString(),
        max_deliver: MAX_DELIVER + 1,
        ack_wait: nanos(deps.ackWaitMs ?? 60_000),
        max_ack_pending: 1000,
      });
    }
  }

  function handler(record: EventTriggerRecord) {
    const { spec } = record;
    return async (msg: JsMsg): Promise<void> => {
      const key = msg.headers?.get('Nats-Msg-Id') || `s${msg.seq}`;
      const runId = triggerRunId(spec.id, key);
      const decoded = decodeMessage(msg.data, JsonValueSchema, 'the event');
      let input: JsonValue;
      if (decoded.ok) input = decoded.value;
      else if (decoded.failure.code === 'bad_json') input = msg.string();
      else throw new DuraError(decoded.failure.code, decoded.failure.message);
      const request = RunRequestSchema.safeParse({
        ...spec.request,
        v: RUN_REQUEST_VERSION,
        runId,
        tenant: spec.tenant,
        input,
        metadata: { ...spec.request.metadata, 'dura.trigger': spec.id, 'dura.event.subject': msg.subject },
      });
      if (!request.success)
        throw new DuraError(
          'invalid_event',
          `event on ${msg.subject} makes no valid run request for trigger ${spec.id}`,
        );
      // `dura.submit` gets the request sealed; the event, once its run request is out, is erased.
      const prepared = secrets?.prepare({ ...request.data, runId }) ?? { request: request.data, held: false };
      await deps.js.publish(SUBJECTS.submit, JSON.stringify(prepared.request), { msgID: runId });
      failpoint('planner.trigger-after-submit');
      if (prepared.held) await secrets?.erase(msg, record);
    };
  }

  async function bind(record: EventTriggerRecord): Promise<void> {
    await ensureConsumer(record);
    const durable = triggerConsumer(record.spec.id);
    bound.set(
      record.spec.id,
      startConsumerLoop({
        js: deps.js,
        spec: {
          stream: STREAMS.events,
          durable,
          filterSubject: record.spec.subject,
          maxDeliver: MAX_DELIVER,
          ackWaitMs: deps.ackWaitMs ?? 60_000,
        },
        source: EVENTS_DLQ_SOURCE,
        concurrency: 16,
        log: deps.log,
        handle: handler(record),
        ...(secrets ? { redact: (msg: JsMsg) => secrets.deadLetter(msg, record) } : {}),
      }),
    );
    deps.log.info('event trigger bound', { trigger: record.spec.id, subject: record.spec.subject });
  }

  async function sync(): Promise<void> {
    const records = await store.list();
    const live = new Set(records.map((r) => r.spec.id));
    for (const record of records) if (!bound.has(record.spec.id) && !stopped) await bind(record);
    for (const [id, loop] of bound) {
      if (live.has(id)) continue;
      bound.delete(id);
      await loop.stop();
      await deps.jsm.consumers.delete(STREAMS.events, triggerConsumer(id)).catch(() => undefined);
      deps.log.info('event trigger removed', { trigger: id });
    }
  }

  function loop(): void {
    if (stopped) return;
    running = sync()
      .catch((err: unknown) => deps.log.warn('event triggers not synced; retried shortly', { err }))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, deps.pollMs ?? 1000);
      });
  }

  return {
    store,
    async start(): Promise<void> {
      stopped = false;
      await ensureEventsStream();
      loop();
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await Promise.all([...bound.values()].map((l) => l.stop()));
      bound.clear();
    },
  };
}

export type EventTriggers = ReturnType<typeof createEventTriggers>;
