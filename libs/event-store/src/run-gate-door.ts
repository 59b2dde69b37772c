import {
  NoRespondersError,
  RequestError,
  TimeoutError,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/nats-core';
import {
  decodeMessage,
  DuraError,
  GateAnswerSchema,
  GateAskSchema,
  SUBJECTS,
  type GateAnswer,
  type GateAsk,
  type RunRequest,
} from '@dura/contracts';
import type { RunGates } from './run-gate-store';

// A debounced `POST /runs` crosses from the projector, which holds no secrets key, to a planner, which seals
// the request before its key's window keeps it (`dura_run_gates`). Request/reply on one subject: a planner
// that cannot take the request answers why, and no planner answering is the projector's refusal to keep it.

/** The queue group of the planners answering gate asks: each ask is taken by one of them. */
export const GATE_ASK_QUEUE = 'dura-planners';
/** How long the projector waits for a planner to answer before refusing the request (503). */
export const GATE_ASK_TIMEOUT_MS = 5_000;

type Request = RunRequest & { runId: string };

/** No planner answered a gate ask in time (none runs, or none may subscribe): nothing was kept. */
export class GateUnanswered extends DuraError {
  constructor(
    readonly why: 'no_responders' | 'timeout',
    timeoutMs: number,
    cause?: unknown,
  ) {
    super(
      'gate_unanswered',
      why === 'no_responders'
        ? `no planner listens on "${SUBJECTS.runGateAsk}"`
        : `no planner answered on "${SUBJECTS.runGateAsk}" within ${timeoutMs} ms`,
      { retryable: true, cause },
    );
  }
}

export interface GateDoorDeps {
  nc: NatsConnection;
  gates: RunGates;
  /** The request as a window may keep it: its secrets sealed for its run id; throws when they cannot be. */
  seal: (request: Request) => Request;
  log: {
    info(message: string, fields?: Record<string, unknown>): void;
    warn(message: string, fields?: Record<string, unknown>): void;
  };
}

/** A planner's side of the gate door, once opened. */
export interface GateDoor {
  /**
   * Settles once the server has the door's subscription: an ask sent from another connection before that
   * finds no responder (a 503 to its caller). A planner is ready only after it.
   */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Answers gate asks (planner side): each request is sealed for its window's run id and taken into its key's
 * window with `gates.arrive`, then the answer says where it waits. One that cannot be sealed (no secrets key,
 * a secret given to a child run) or decided is refused with the reason, and kept nowhere.
 */
export function serveGateAsks(deps: GateDoorDeps): GateDoor {
  const pending = new Set<Promise<void>>();
  const sub: Subscription = deps.nc.subscribe(SUBJECTS.runGateAsk, {
    queue: GATE_ASK_QUEUE,
    callback: (err, msg) => {
      if (err) return deps.log.warn('gate asks not taken: the subscription failed', { err });
      const answered = answer(msg).finally(() => pending.delete(answered));
      pending.add(answered);
    },
  });

  async function answer(msg: Msg): Promise<void> {
    const reply = await answerOf(msg.data);
    if ('refused' in reply)
      deps.log.warn('debounced request refused: not kept in its window', { ...reply.refused });
    msg.respond(JSON.stringify(reply));
  }

  async function answerOf(data: Uint8Array): Promise<GateAnswer> {
    const decoded = decodeMessage(data, GateAskSchema, 'the gate ask');
    if (!decoded.ok) return refused(new DuraError(decoded.failure.code, decoded.failure.message));
    const ask = decoded.value;
    try {
      const outcome = await deps.gates.arrive({
        scope: ask.scope,
        key: ask.key,
        source: ask.source,
        runId: ask.source,
        request: (runId) => deps.seal({ ...ask.request, runId }),
        skipIfRunning: ask.skipIfRunning,
        debounce: {
          windowMs: ask.windowMs,
          windowRunId: (openedAt) => `${ask.windowRunIdPrefix}${openedAt.toString(36)}`,
        },
      });
      if (outcome.kind !== 'debounced')
        return refused(new DuraError('internal', `a debounced request's gate answered ${outcome.kind}`));
      const { runId, fireAt, events, replaced } = outcome;
      deps.log.info('request debounced: its key window starts the run unless a later request replaces it', {
        scope: ask.scope,
        key: ask.key,
        runId,
        fireAt: new Date(fireAt).toISOString(),
        replaced,
        events,
      });
      return { debounced: { runId, fireAt, events, ...(replaced === undefined ? {} : { replaced }) } };
    } catch (err) {
      if (err instanceof DuraError) return refused(err);
      deps.log.warn('debounced request not taken; the caller may retry', { scope: ask.scope, err });
      return refused(
        new DuraError('internal', 'the planner could not take the request into its window', {
          retryable: true,
        }),
      );
    }
  }

  return {
    ready: deps.nc.flush(),
    async stop(): Promise<void> {
      sub.unsubscribe();
      // Once the server has dropped the subscription, an ask finds no responder at once, not a silent door.
      await deps.nc.flush().catch(() => undefined);
      await Promise.allSettled([...pending]);
    },
  };
}

const refused = (err: DuraError): GateAnswer => ({
  refused: { code: err.code, message: err.message, retryable: err.retryable },
});

/**
 * Hands a debounced request to a planner (projector side) and returns its answer. Throws `GateUnanswered`
 * when no planner listens or none answers within `timeoutMs`; other failures (a denied publish) as they are.
 */
export async function askGate(
  nc: NatsConnection,
  ask: GateAsk,
  timeoutMs = GATE_ASK_TIMEOUT_MS,
): Promise<GateAnswer> {
  let reply: Msg;
  try {
    reply = await nc.request(SUBJECTS.runGateAsk, JSON.stringify(ask), { timeout: timeoutMs });
  } catch (err) {
    const why = unanswered(err);
    if (why) throw new GateUnanswered(why, timeoutMs, err);
    throw err;
  }
  const decoded = decodeMessage(reply.data, GateAnswerSchema, "a planner's gate answer");
  if (!decoded.ok) throw new DuraError(decoded.failure.code, decoded.failure.message, { retryable: true });
  return decoded.value;
}

function unanswered(err: unknown): GateUnanswered['why'] | undefined {
  if (err instanceof TimeoutError) return 'timeout';
  if (err instanceof NoRespondersError) return 'no_responders';
  if (err instanceof RequestError) {
    if (err.isNoResponders()) return 'no_responders';
    if (err.cause instanceof TimeoutError) return 'timeout';
  }
  return undefined;
}
