import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { JetStreamHandles } from './jetstream-handles';
import {
  ContractViolation,
  formatIssues,
  RUN_REQUEST_VERSION,
  RunRequestSchema,
  SIGNAL_VERSION,
  SignalRequestSchema,
  SUBJECTS,
  type JsonValue,
  type RunEvent,
  type RunRequest,
} from '@dura/contracts';
import { fold, type RunState, type TokenFrame } from '@dura/core';
import { createApiSubmit } from './api-submit';
import { ClientNotConfigured, RunNotFound } from './errors';
import { forkRun, type ForkRunInput } from './fork';
import { createTriggerApi } from './schedules';
import type { FollowTokensOptions, LiveDelta } from './live-tokens';
import type { Parked } from './parked';
import { createReadApi } from './read-api';
import type { WatchOptions } from './watch-run';
import type { NatsReads } from './nats-reads';

const DEFAULT_CANCEL_REASON = 'cancelled by a client';

/** A run request as a caller writes it; `v` is filled in and `runId` generated when absent. */
export type SubmitRunInput = Omit<RunRequest, 'v'> & { v?: RunRequest['v'] };

export interface SubmitResult {
  runId: string;
  /**
   * True when a request with this run id was already submitted (within the dedupe window, 2 minutes by
   * default): nothing new starts, whatever this request's body says.
   */
  duplicate: boolean;
}

export interface SignalOptions {
  payload?: JsonValue;
  /** Idempotency key of the signal (default: a fresh id). Sending the same id again records nothing new. */
  signalId?: string;
  /** Throw `RunNotFound` instead of sending when the run has no events (default false: the planner dead-letters it). */
  mustExist?: boolean;
}

export interface SignalResult {
  signalId: string;
  duplicate: boolean;
}

export interface DuraClientOptions {
  /** JetStream handles for submitRun, watchRun, getRun, signal, cancel, readEvents. */
  js?: JetStreamClient;
  jsm?: JetStreamManager;
  /** Used instead of `js`/`jsm`: called once, on the first call that needs NATS (connectDuraClient passes it). */
  connectNats?: () => Promise<JetStreamHandles>;
  /** Base URL of the projector's read API (e.g. http://127.0.0.1:8080), for listRuns, stateAt and events. */
  apiUrl?: string;
  /** Read-API request timeout, default 10 s. */
  apiTimeoutMs?: number;
  /** Bearer token for the read API (scope `read`), when the projector requires credentials. */
  apiToken?: string;
  fetch?: typeof fetch;
}

/** The client SDK: submit runs, follow them live, signal and cancel them, and read them, all typed from the contract. */
export function createDuraClient(options: DuraClientOptions) {
  const api = createReadApi({
    ...(options.apiUrl === undefined ? {} : { apiUrl: options.apiUrl }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.apiTimeoutMs === undefined ? {} : { timeoutMs: options.apiTimeoutMs }),
    ...(options.apiToken === undefined ? {} : { apiToken: options.apiToken }),
  });
  const submitRunOverApi = createApiSubmit({
    ...(options.apiUrl === undefined ? {} : { apiUrl: options.apiUrl }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.apiTimeoutMs === undefined ? {} : { timeoutMs: options.apiTimeoutMs }),
    ...(options.apiToken === undefined ? {} : { apiToken: options.apiToken }),
  });
  let handles: Promise<NatsReads> | undefined;

  // Reads create no consumer (message gets, woken by the run subject): the `client` permission set may not
  // create consumers, since a consumer's deliver subject could be any subject (nats-server#8274). The NATS
  // side of the client (nats-side.ts: the event store, OpenTelemetry) loads here, with the first NATS call.
  function nats(): Promise<NatsReads> {
    // A failed connect is not remembered: the next call tries again.
    handles ??= Promise.all([resolveHandles(options), import('./nats-side')]).then(
      ([h, side]) => ({ ...h, ...side.openReads(h), side }),
      (err: unknown) => {
        handles = undefined;
        throw err;
      },
    );
    return handles;
  }

  /**
   * Publishes a run request to `dura.submit` under `Nats-Msg-Id: <runId>`. Idempotent on the run id the
   * caller chooses: resubmitting the same id returns `{ duplicate: true }` and never starts a second run.
   */
  async function submitRun(input: SubmitRunInput): Promise<SubmitResult> {
    const runId = input.runId ?? `run_${crypto.randomUUID().replaceAll('-', '')}`;
    const parsed = RunRequestSchema.safeParse({ ...input, v: input.v ?? RUN_REQUEST_VERSION, runId });
    if (!parsed.success) throw new ContractViolation('run request is invalid', formatIssues(parsed.error));
    const { js, side } = await nats();
    try {
      // In the caller's trace when it has one (an app with OpenTelemetry started): the run continues it.
      const ack = await side.publishTraced(js, {
        subject: SUBJECTS.submit,
        msgID: runId,
        runId,
        body: JSON.stringify(parsed.data),
      });
      return { runId, duplicate: ack.duplicate };
    } catch (err) {
      throw side.mapAppendError(err, runId, undefined);
    }
  }

  /**
   * Yields the run's events in order from `fromSeq` (default 1), history then live, each exactly once, and
   * stops after the terminal event. Survives a broken connection: it re-opens at the last seq seen + 1.
   */
  async function* watchRun(runId: string, watchOptions: WatchOptions = {}): AsyncGenerator<RunEvent> {
    const { watchRunEvents } = await import('./watch-run');
    yield* watchRunEvents(nats, runId, watchOptions);
  }

  /**
   * Sends a named signal to a run on `dura.signal` (`confirm`/`skip` answer an operator wait; any name can
   * resume a run waiting for it). Idempotent on `signalId`.
   */
  async function signal(
    runId: string,
    name: string,
    signalOptions: SignalOptions = {},
  ): Promise<SignalResult> {
    const signalId = signalOptions.signalId ?? `sig_${crypto.randomUUID().replaceAll('-', '')}`;
    const parsed = SignalRequestSchema.safeParse({
      v: SIGNAL_VERSION,
      runId,
      signalId,
      name,
      ...(signalOptions.payload === undefined ? {} : { payload: signalOptions.payload }),
    });
    if (!parsed.success) throw new ContractViolation('signal is invalid', formatIssues(parsed.error));
    const { js, side } = await nats();
    if (signalOptions.mustExist && (await lastSeq(runId)) === 0) throw new RunNotFound(runId);
    try {
      const ack = await side.publishTraced(js, {
        subject: SUBJECTS.signal,
        msgID: `signal:${runId}:${signalId}`,
        runId,
        body: JSON.stringify(parsed.data),
      });
      return { signalId, duplicate: ack.duplicate };
    } catch (err) {
      throw side.mapAppendError(err, runId, undefined);
    }
  }

  /** Asks the planner to cancel the run: the signal named `cancel` with payload `{ reason }`; it records `run_cancelled`. */
  function cancel(
    runId: string,
    cancelOptions: { reason?: string; signalId?: string; mustExist?: boolean } = {},
  ): Promise<SignalResult> {
    const { reason, ...rest } = cancelOptions;
    return signal(runId, 'cancel', { ...rest, payload: { reason: reason ?? DEFAULT_CANCEL_REASON } });
  }

  /** The run's current state: its log read from JetStream and folded by the same `evolve` every service uses. */
  async function getRun(runId: string): Promise<RunState> {
    const events = await readEvents(runId);
    if (events.length === 0) throw new RunNotFound(runId);
    return fold(events);
  }

  /** Stream sequence of the run's last event, or 0 when it has none (one direct get). */
  async function lastSeq(runId: string): Promise<number> {
    const { reader, side } = await nats();
    return reader.lastSeq(runId).catch((err: unknown) => {
      throw side.mapAppendError(err, runId, undefined);
    });
  }

  /** The run's events with `seq >= fromSeq`, read from JetStream (the log itself, not the projection). */
  async function readEvents(runId: string, readOptions?: { fromSeq?: number }): Promise<RunEvent[]> {
    const { reader, side } = await nats();
    const stored = await reader.readAll(runId, readOptions?.fromSeq ?? 1).catch((err: unknown) => {
      throw side.mapAppendError(err, runId, undefined);
    });
    return stored.map(side.decodeStored);
  }

  /** When the run is parked for a planner that serves its pinned agent version: which one. */
  async function parkedFor(runId: string): Promise<Parked | undefined> {
    const { jsm } = await nats();
    const { readParked } = await import('./parked');
    return readParked(jsm, runId);
  }

  /**
   * The run's token feed (live model text, tagged by call and attempt, with `discard`, `gap`, `final` and
   * `end`), from `options.from` (the last frame's id) or the start of the retained text; resolves at `end` or
   * when `signal` aborts.
   */
  async function followRunTokens(
    runId: string,
    onFrame: (frame: TokenFrame) => void,
    options: FollowTokensOptions,
  ): Promise<void> {
    const { reader, wakeups, tokens } = await nats();
    const { followTokens } = await import('./live-tokens');
    await followTokens({ runs: { reader, wakeups }, tokens }, runId, onFrame, options);
  }

  /**
   * The text of the run's model calls as it streams, piece by piece; a piece of an attempt that is later
   * dropped is not taken back here (use `followRunTokens` for `discard` and the recorded text). Resolves when
   * `signal` aborts or the run ends.
   */
  async function onLiveTokens(
    runId: string,
    onDelta: (delta: LiveDelta) => void,
    signal: AbortSignal,
  ): Promise<void> {
    await followRunTokens(
      runId,
      ({ event }) => {
        if (event.event === 'token') {
          const { decision, call, attempt, delta } = event.data;
          onDelta({ decision, call, attempt, delta });
        }
      },
      { signal },
    );
  }

  const triggers = createTriggerApi(nats);

  return {
    onLiveTokens,
    followRunTokens,
    parkedFor,
    submitRun,
    /** `POST /runs` (needs `apiUrl`): the door that takes `debounce` and `dedupe`; says started, debounced or skipped. */
    submitRunOverApi,
    /** Recurring runs: create, list, get (past and next ticks), pause, resume, trigger, delete. */
    schedules: triggers.schedules,
    /** Runs started by messages on `dura.event.>` subjects. */
    eventTriggers: triggers.eventTriggers,
    watchRun,
    getRun,
    signal,
    cancel,
    readEvents,
    lastSeq,
    forkRun: (input: ForkRunInput) => forkRun(nats, input),
    listRuns: api.listRuns,
    stateAt: api.stateAt,
    events: api.events,
    causes: api.causes,
    flowLimits: api.flowLimits,
  };
}

export type DuraClient = ReturnType<typeof createDuraClient>;

async function resolveHandles(options: DuraClientOptions): Promise<JetStreamHandles> {
  if (options.js && options.jsm) return { js: options.js, jsm: options.jsm };
  if (options.connectNats) return options.connectNats();
  throw new ClientNotConfigured(
    'nats_not_configured',
    'this call needs NATS: pass { js, jsm } from @nats-io/jetstream to createDuraClient, or use connectDuraClient({ natsUrl })',
  );
}
