import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import {
  ContractViolation,
  formatIssues,
  RUN_REQUEST_VERSION,
  RunRequestSchema,
  SIGNAL_VERSION,
  SignalRequestSchema,
  type JsonValue,
  runSubject,
  STREAMS,
  SUBJECTS,
  type EventType,
  type RunEvent,
  type RunRequest,
} from '@dura/contracts';
import { fold, type RunState } from '@dura/core';
import { createEventStore, decodeStored, mapAppendError } from '@dura/event-store';
import { DURA_ATTRS, withProducerSpan } from '@dura/telemetry';
import { trace } from '@opentelemetry/api';

/** A run request as a caller writes it; `v` is filled in and `runId` generated when absent. */
export type SubmitRunInput = Omit<RunRequest, 'v'> & { v?: RunRequest['v'] };

export interface SubmitResult {
  runId: string;
  /** True when a request with this run id was already submitted (within the dedupe window): nothing new starts. */
  duplicate: boolean;
}

export interface WatchOptions {
  /** First stream sequence to deliver (default: the run's first event). Resume after a disconnect with lastSeq + 1. */
  fromSeq?: number;
  /** Stop after the run's terminal event (default true). */
  untilFinished?: boolean;
  signal?: AbortSignal;
}

const TERMINAL_EVENTS: ReadonlySet<EventType> = new Set([
  'run_completed',
  'run_failed',
  'run_cancelled',
  'run_rejected',
]);

/** The client SDK: submit runs, follow them live, and read their state, all typed from the wire contract. */
export function createDuraClient(deps: { js: JetStreamClient; jsm: JetStreamManager }) {
  const store = createEventStore(deps);
  const tracer = trace.getTracer('dura-client');

  /** Publishes a run request to `dura.submit`. Idempotent on `runId`: resubmitting the same id never starts a second run. */
  async function submitRun(input: SubmitRunInput): Promise<SubmitResult> {
    const runId = input.runId ?? `run_${crypto.randomUUID().replaceAll('-', '')}`;
    const parsed = RunRequestSchema.safeParse({ ...input, v: input.v ?? RUN_REQUEST_VERSION, runId });
    if (!parsed.success) throw new ContractViolation('run request is invalid', formatIssues(parsed.error));
    try {
      // In the caller's trace when it has one (an app with OpenTelemetry started): the run continues it.
      const ack = await withProducerSpan(
        tracer,
        { destination: SUBJECTS.submit, messageId: runId, attributes: { [DURA_ATTRS.runId]: runId } },
        (headers) => deps.js.publish(SUBJECTS.submit, JSON.stringify(parsed.data), { msgID: runId, headers }),
      );
      return { runId, duplicate: ack.duplicate };
    } catch (err) {
      throw mapAppendError(err, runId, undefined);
    }
  }

  /** Yields the run's events in order, from `fromSeq`, then live as they are appended. */
  async function* watchRun(runId: string, options: WatchOptions = {}): AsyncGenerator<RunEvent> {
    const consumer = await deps.js.consumers.get(STREAMS.runs, {
      filter_subjects: runSubject(runId),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, options.fromSeq ?? 1),
    });
    const messages = await consumer.consume({ max_messages: 256 });
    const abort = (): void => void messages.close();
    options.signal?.addEventListener('abort', abort, { once: true });
    // 'abort' never fires for a signal that aborted before (or while) the consumer was set up.
    if (options.signal?.aborted) abort();
    try {
      for await (const msg of messages) {
        const event = decodeStored(msg);
        yield event;
        if ((options.untilFinished ?? true) && TERMINAL_EVENTS.has(event.type)) return;
      }
    } finally {
      options.signal?.removeEventListener('abort', abort);
      await messages.close();
    }
  }

  /**
   * Sends a named signal to a run (`confirm`/`skip` answer an operator wait; any name can resume a run waiting
   * for it). Idempotent on `signalId`: sending the same id again records nothing new.
   */
  async function signal(
    runId: string,
    name: string,
    options: { payload?: JsonValue; signalId?: string } = {},
  ): Promise<{ signalId: string; duplicate: boolean }> {
    const signalId = options.signalId ?? `sig_${crypto.randomUUID().replaceAll('-', '')}`;
    const parsed = SignalRequestSchema.safeParse({
      v: SIGNAL_VERSION,
      runId,
      signalId,
      name,
      ...(options.payload === undefined ? {} : { payload: options.payload }),
    });
    if (!parsed.success) throw new ContractViolation('signal is invalid', formatIssues(parsed.error));
    try {
      const msgID = `signal:${runId}:${signalId}`;
      const ack = await withProducerSpan(
        tracer,
        { destination: SUBJECTS.signal, messageId: msgID, attributes: { [DURA_ATTRS.runId]: runId } },
        (headers) => deps.js.publish(SUBJECTS.signal, JSON.stringify(parsed.data), { msgID, headers }),
      );
      return { signalId, duplicate: ack.duplicate };
    } catch (err) {
      throw mapAppendError(err, runId, undefined);
    }
  }

  /** The run's current state: its log folded by the same `evolve` every service uses. */
  async function getRun(runId: string): Promise<RunState> {
    return fold(await store.read(runId));
  }

  return {
    submitRun,
    watchRun,
    getRun,
    signal,
    readEvents: (runId: string, options?: { fromSeq?: number }) => store.read(runId, options),
  };
}

export type DuraClient = ReturnType<typeof createDuraClient>;
