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
import type { RunPhase } from '@dura/core';
import {
  connectionOf,
  createRunGates,
  createTriggerStore,
  isJsApiError,
  JS_CODES,
  serveGateAsks,
  type GateDoor,
  type TriggerEntry,
} from '@dura/event-store';
import { failpoint, startConsumerLoop, type ConsumerLoop, type Logger } from '@dura/service-kit';
import { createEventSecrets, type EventSecretPorts } from './event-secrets';
import { createGatePass } from './gate-pass';
import { createTriggerGate } from './trigger-gate';

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
  /** Where a run stands (its folded log): skip-if-running asks it about a key's last run. */
  phaseOf: (runId: string) => Promise<RunPhase>;
  /** How often the debounce windows (`dura_run_gates`) are looked at, on average (default 250 ms). */
  gatePollMs?: number;
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
  const bound = new Map<string, { loop: ConsumerLoop; revision: number }>();
  const gates = createRunGates({
    js: deps.js,
    ...(deps.replicas ? { replicas: deps.replicas } : {}),
    phaseOf: deps.phaseOf,
  });
  const gateEvent = createTriggerGate({ js: deps.js, gates, log: deps.log });
  const gatePass = createGatePass({
    js: deps.js,
    gates,
    log: deps.log,
    triggerRevision: async (id) => (await store.current(id))?.revision,
    ...(deps.gatePollMs === undefined ? {} : { pollMs: deps.gatePollMs }),
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let door: GateDoor | undefined;
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

  /**
   * Takes debounced `POST /runs` requests from the projector into their windows, sealed as an event's run
   * request is (`secrets.seal` throws when one holding a secret cannot be: the request is refused, not kept).
   */
  function openGateDoor(): GateDoor | undefined {
    const nc = connectionOf(deps.js);
    if (!nc) {
      deps.log.warn(
        `debounced POST /runs not taken here: no NATS connection to answer ${SUBJECTS.runGateAsk} on`,
      );
      return undefined;
    }
    const seal = deps.secrets?.seal;
    return serveGateAsks({ nc, gates, log: deps.log, seal: (request) => (seal ? seal(request) : request) });
  }

  async function ensureConsumer(record: EventTriggerRecord): Promise<void> {
    const durable = triggerConsumer(record.spec.id);
    const startsAt = new Date(record.createdAt).toISOString();
    const info = await deps.jsm.consumers.info(STREAMS.events, durable).catch((err: unknown) => {
      if (!isJsApiError(err, JS_CODES.consumerNotFound)) throw err;
      return undefined;
    });
    if (info) {
      const at = info.config.opt_start_time;
      if (at !== undefined && Date.parse(at) === record.createdAt) return;
      // Left by a deleted trigger of the same id: its position is not this trigger's.
      await deps.jsm.consumers.delete(STREAMS.events, durable).catch((err: unknown) => {
        if (!isJsApiError(err, JS_CODES.consumerNotFound)) throw err;
      });
    }
    // From the trigger's creation on: messages published before it existed are not its business.
    await deps.jsm.consumers.add(STREAMS.events, {
      durable_name: durable,
      filter_subject: record.spec.subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: startsAt,
      max_deliver: MAX_DELIVER + 1,
      ack_wait: nanos(deps.ackWaitMs ?? 60_000),
      max_ack_pending: 1000,
    });
  }

  function handler({ record, revision }: TriggerEntry) {
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
      // The trigger as the bucket's leader has it now, read after the message was stored: a delete that
      // returned before the message was published is seen, whatever this replica's last poll saw.
      const current = await store.current(spec.id);
      if (current?.revision !== revision) {
        deps.log.info('event not started: its trigger was deleted or replaced', {
          trigger: spec.id,
          seq: msg.seq,
          subject: msg.subject,
        });
        return;
      }
      const prepare = (id: string) =>
        secrets?.prepare({ ...request.data, runId: id }) ?? {
          request: { ...request.data, runId: id },
          held: false,
        };
      const prepared = prepare(runId);
      if (spec.debounce || spec.dedupe) {
        const source = msg.headers?.get('Nats-Msg-Id') || `s${msg.seq}`;
        await gateEvent({ spec, revision, msg, input, source, runId, request: (id) => prepare(id).request });
        if (prepared.held) await secrets?.erase(msg, record);
        return;
      }
      await deps.js.publish(SUBJECTS.submit, JSON.stringify(prepared.request), { msgID: runId });
      failpoint('planner.trigger-after-submit');
      if (prepared.held) await secrets?.erase(msg, record);
    };
  }

  async function bind(entry: TriggerEntry): Promise<void> {
    const { record } = entry;
    await ensureConsumer(record);
    const durable = triggerConsumer(record.spec.id);
    bound.set(record.spec.id, {
      revision: entry.revision,
      loop: startConsumerLoop({
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
        handle: handler(entry),
        ...(secrets ? { redact: (msg: JsMsg) => secrets.deadLetter(msg, record) } : {}),
      }),
    });
    deps.log.info('event trigger bound', { trigger: record.spec.id, subject: record.spec.subject });
  }

  async function sync(): Promise<void> {
    const entries = await store.entries();
    const live = new Map(entries.map((e) => [e.record.spec.id, e.revision]));
    for (const [id, { loop, revision }] of bound) {
      if (live.get(id) === revision) continue;
      // Deleted, or deleted and made again (another revision: rebound below from its own creation).
      bound.delete(id);
      await loop.stop();
      if (!live.has(id))
        await deps.jsm.consumers.delete(STREAMS.events, triggerConsumer(id)).catch(() => undefined);
      deps.log.info('event trigger removed', { trigger: id });
    }
    for (const entry of entries) if (!bound.has(entry.record.spec.id) && !stopped) await bind(entry);
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
    gates,
    async start(): Promise<void> {
      stopped = false;
      await ensureEventsStream();
      loop();
      gatePass.start();
      door ??= openGateDoor();
      // Ready only once the server has the door's subscription: an ask before that would find no planner.
      await door?.ready;
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      await door?.stop();
      door = undefined;
      await gatePass.stop();
      await running;
      await Promise.all([...bound.values()].map((b) => b.loop.stop()));
      bound.clear();
    },
  };
}

export type EventTriggers = ReturnType<typeof createEventTriggers>;
