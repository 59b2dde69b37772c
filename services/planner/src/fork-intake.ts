import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import {
  decodeMessage,
  DuraError,
  ForkRequestSchema,
  RunIdSchema,
  type ForkRequest,
  type NewEvent,
  type RunEvent,
  type RunRequest,
} from '@dura/contracts';
import { canonicalJson, planFork } from '@dura/core';
import { retryOnConflict, type EventStore } from '@dura/event-store';
import { duraTracer, withLogFields, type Logger } from '@dura/service-kit';
import { DURA_ATTRS, spanContextOf, traceparentOf, withSpan } from '@dura/telemetry';
import { trace as traces } from '@opentelemetry/api';
import { pinnedVersionOf, type AgentCatalog } from '@dura/agents';
import type { SecretsBox, ToolRegistry } from '@dura/tools';
import type { EraseRequest } from './erase-request';
import { guardForkEdit, redactForkEditBytes } from './fork-edit-policy';
import { refusal, rejectRequest, type Rejection } from './reject-request';
import type { RegisteredSecrets } from './secret-inputs';
import { authorizeRequest, OPEN_AUTHORIZATION, type ToolAuthorization } from './tool-authorization';
import type { RunDriver } from './run-driver';

export const FORKS_DLQ_SOURCE = 'forks';

export interface ForkIntakeDeps {
  store: EventStore;
  js: JetStreamClient;
  driver: RunDriver;
  log: Logger;
  clock: () => Date;
  /** Deliveries of one fork request before it is refused for good (the consumer's `maxDeliver`). */
  maxDeliver: number;
  maxConflicts?: number;
  /** The policy the fork's copied request must still pass (inline plans, the tenant's agents). */
  authorization?: ToolAuthorization;
  /** Pins a run of a registered agent (see `Model.start`): what a version grant is checked against. */
  model?: Partial<Pick<AgentCatalog, 'start'>>;
  /** What an edited input or tool result is checked against and sealed by (see `guardForkEdit`). */
  tools: ToolRegistry;
  secrets?: SecretsBox;
  registered?: RegisteredSecrets;
  /** Erases a handled fork request whose edit held a secret in clear, or was refused (see `createIntake`). */
  erase?: EraseRequest;
}

/** What a fork request may carry: the rest of a run (agent, input, tenant, ...) is copied from its source. */
const FORK_FIELDS = new Set(Object.keys(ForkRequestSchema.shape));

/** The new run's id a fork request names (or would be given), for dead letters and `run_rejected`. */
function runIdHint(msg: JsMsg, fromBody: string | undefined): string | undefined {
  const header = msg.headers?.get('Nats-Msg-Id') ?? '';
  return fromBody ?? RunIdSchema.safeParse(header.replace(/^fork:/, '')).data;
}

/**
 * Handles one message from `dura.fork`: starts a new run whose log is the source run's log up to `atSeq`
 * (see `planFork`), then drives it like any run. Idempotent: the copies carry deterministic ids, so a
 * redelivered request appends nothing new and a half-written fork is completed. A request that cannot be
 * honoured (unknown source, a seq that is not the source's, a run id already used) is dead-lettered on
 * `dura.dlq.forks` with the reason, and the new run id gets `run_rejected` when it has no history yet.
 */
export function createForkIntake(deps: ForkIntakeDeps) {
  const { store, driver, log, clock } = deps;
  const maxConflicts = deps.maxConflicts ?? 20;

  /** A refused request that carried an edit is dead-lettered with the edited values hidden, and erased. */
  async function reject(msg: JsMsg, runId: string | undefined, rejection: Rejection): Promise<void> {
    const payload = redactForkEditBytes(msg.data);
    await rejectRequest(deps, msg, FORKS_DLQ_SOURCE, runId, payload ? { ...rejection, payload } : rejection);
    if (payload) await deps.erase?.(msg.seq);
  }

  /**
   * Appends whatever part of `planned` the new run's log does not hold yet. False when the log holds
   * something else: the run id belongs to another run.
   */
  function write(runId: string, planned: readonly NewEvent[]): Promise<boolean> {
    return retryOnConflict(
      async () => {
        const existing = await store.read(runId);
        if (!isPrefixOfFork(existing, planned)) return false;
        if (existing.length >= planned.length) return true;
        const expectedSeq = existing.at(-1)?.seq ?? 0;
        await store.append(runId, planned.slice(existing.length), { expectedSeq });
        return true;
      },
      { maxConflicts },
    );
  }

  async function fork(msg: JsMsg, request: ForkRequest & { runId: string }): Promise<void> {
    const { runId, sourceRunId, atSeq, edit } = request;
    const source = await store.read(sourceRunId);
    // A fork is a run of its own, in a trace of its own, linked to where its source was at the fork point.
    const forkedFrom = spanContextOf(source.filter((event) => event.seq <= atSeq).at(-1)?.meta.trace);
    if (forkedFrom)
      traces
        .getActiveSpan()
        ?.addLink({ context: forkedFrom, attributes: { 'dura.fork.source_run_id': sourceRunId } });
    const trace = traceparentOf();
    const plan = planFork({
      source,
      atSeq,
      runId,
      ts: clock().toISOString(),
      ...(trace ? { trace } : {}),
      ...(edit ? { edit } : {}),
    });
    if (!plan.ok) {
      const { code, message, retryable } = plan.problem;
      const error = { code, message: `fork of ${sourceRunId} at seq ${atSeq} refused: ${message}` };
      // The source may still record the outcome the fork waits for: ask again, a bounded number of times.
      if (retryable && msg.info.deliveryCount < deps.maxDeliver)
        throw new DuraError(code, error.message, { retryable: true });
      await reject(msg, runId, { error });
      return;
    }
    const denied = authorize(plan.events[0], runId);
    if (denied) {
      await reject(msg, runId, denied);
      return;
    }
    const guarded = edit
      ? guardForkEdit(deps, plan.events, edit)
      : { ok: true as const, events: plan.events, sealed: false };
    if (!guarded.ok) {
      const { error, ...rest } = guarded.rejection;
      await reject(msg, runId, {
        ...rest,
        error: { ...error, message: `fork of ${sourceRunId} at seq ${atSeq} refused: ${error.message}` },
      });
      return;
    }
    if (!(await write(runId, guarded.events))) {
      await reject(msg, runId, {
        announce: false,
        error: {
          code: 'run_id_conflict',
          message: `run id ${runId} is already used by another run; fork ${sourceRunId} again with a new run id`,
        },
      });
      return;
    }
    // The log holds the edit sealed: the request that carried it in clear goes.
    if (guarded.sealed) await deps.erase?.(msg.seq);
    log.info('run forked', {
      runId,
      sourceRunId,
      atSeq,
      copied: plan.events.length - 1,
      edited: edit !== undefined,
    });
    await driver.drive(runId);
  }

  /** The fork runs its source's request again, so it must pass today's policy, whatever the source passed. */
  function authorize(root: NewEvent | undefined, runId: string): Rejection | undefined {
    if (root?.type !== 'run_requested') return undefined;
    const { request, forkOf } = root.data as {
      request: RunRequest & { runId: string };
      forkOf?: { runId: string };
    };
    const denied = authorizeRequest(deps.authorization ?? OPEN_AUTHORIZATION, request, (agent) =>
      pinnedVersionOf(deps.model, { ...request, runId }, agent),
    );
    if (!denied) return undefined;
    return {
      error: {
        code: denied.code,
        message: `fork of ${forkOf?.runId ?? 'its source'} refused: ${denied.message}`,
      },
      ...(denied.issues ? { issues: denied.issues } : {}),
    };
  }

  return async function handleFork(msg: JsMsg): Promise<void> {
    const decoded = decodeMessage(msg.data, ForkRequestSchema, 'fork request', {
      invalidCode: 'invalid_request',
    });
    if (!decoded.ok) {
      await reject(msg, runIdHint(msg, decoded.runId), refusal(decoded.failure));
      return;
    }
    // Within the limits decodeMessage checked, so parsing the raw body again is safe.
    const body = JSON.parse(msg.string()) as Record<string, unknown>;
    const extra = Object.keys(body).filter((key) => !FORK_FIELDS.has(key));
    if (extra.length > 0) {
      // Silently dropping `agent` or `input` would run the source's plan while the caller thinks it changed it.
      await reject(msg, runIdHint(msg, decoded.value.runId), {
        error: {
          code: 'invalid_request',
          message: `a fork copies its source run's request and cannot change it (got ${extra.join(', ')}); to run something else, submit a new run`,
        },
        issues: extra.map((key) => `${key}: not a fork field (allowed: ${[...FORK_FIELDS].join(', ')})`),
      });
      return;
    }
    const parsed = { data: decoded.value };
    const runId = parsed.data.runId ?? `fork-${msg.seq}`;
    const attributes = {
      [DURA_ATTRS.runId]: runId,
      'dura.fork.source_run_id': parsed.data.sourceRunId,
      'dura.fork.at_seq': parsed.data.atSeq,
      'dura.fork.edited': parsed.data.edit !== undefined,
    };
    await withLogFields({ runId }, () =>
      withSpan(duraTracer(), 'dura.fork', { attributes }, () => fork(msg, { ...parsed.data, runId })),
    );
  };
}

/** The log holds the fork's first events (same ids, same request and origin), or nothing. */
function isPrefixOfFork(existing: readonly RunEvent[], planned: readonly NewEvent[]): boolean {
  const [first] = existing;
  const [root] = planned;
  if (first === undefined) return true;
  if (first.type !== 'run_requested' || root?.type !== 'run_requested') return false;
  if (canonicalJson(first.data) !== canonicalJson(root.data)) return false;
  return existing.slice(0, planned.length).every((event, i) => event.meta.id === planned[i]?.meta.id);
}
