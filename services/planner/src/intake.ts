import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import {
  DuraError,
  newEvent,
  RunIdSchema,
  RunRequestSchema,
  DEFAULT_TENANT,
  decodeMessage,
  type RunRequest,
} from '@dura/contracts';
import { canonicalJson, decisionEventId } from '@dura/core';
import { ConcurrencyConflict, EventOverLimits, EventTooLarge, type EventStore } from '@dura/event-store';
import { duraTracer, firstPublished, RetryLater, withLogFields, type Logger } from '@dura/service-kit';
import { DURA_ATTRS, traceparentOf, withSpan } from '@dura/telemetry';
import { SecretsKeyMissing, type SecretsBox, type ToolRegistry } from '@dura/tools';
import { pinnedVersionOf, type PlannerModel } from '@dura/agents';
import { checkPlan } from './plan-check';
import { refusal, rejectRequest, type Rejection } from './reject-request';
import type { EraseRequest } from './erase-request';
import { redactRequest } from './redact-request';
import { SecretInChildPlan, sealRequest } from './seal-request';
import { registeredSecrets, type RegisteredSecrets } from './secret-inputs';
import type { RunDriver } from './run-driver';
import type { TenantAdmission } from './tenant-admission';
import { TENANT_LIMIT_CODE, tenantLimit, type TenantLimits } from './tenant-limits';
import { checkChildRequest } from './child-intake';
import { authorizeRequest, OPEN_AUTHORIZATION, type ToolAuthorization } from './tool-authorization';

export interface IntakeDeps {
  store: EventStore;
  js: JetStreamClient;
  driver: RunDriver;
  tools: ToolRegistry;
  log: Logger;
  clock: () => Date;
  /** Checks a request naming an agent: an agent or version this planner does not serve is rejected. */
  model?: PlannerModel;
  /** Seals the secret fields of plans (and the input they use) before the request enters the log. */
  secrets?: SecretsBox;
  /**
   * Erases a handled request from `dura.submit` (it held secrets in clear; the log, a dead letter or its
   * requeued copy holds it sealed or redacted). Never throws: a failure is its own error log and metric.
   */
  erase?: EraseRequest;
  /** Limits on runs in flight per tenant, shared by every replica through `admission`; unset: no limits. */
  tenants?: { limits: TenantLimits; admission: TenantAdmission; waitMs?: () => number };
  /** Who may start which agents, and whether inline plans are on; default: everything allowed. */
  authorization?: ToolAuthorization;
  /** Where registered agents' runs hold secrets in their input; default: what `model` tells. */
  registered?: RegisteredSecrets;
}

export const REQUESTS_DLQ_SOURCE = 'requests';

function planLength(request: RunRequest): number {
  return request.agent.kind === 'scripted' ? request.agent.steps.length : 0;
}

/**
 * Handles one message from `dura.submit`. A valid request starts its run (idempotently: a redelivered or
 * resubmitted request with the same run id joins the existing run). An invalid one is never lost and never
 * blocks the next: it is dead-lettered with the reason, and when it names a run id that run gets a
 * `run_rejected` event so a client watching it learns why.
 */
export function createIntake(deps: IntakeDeps) {
  const { store, driver, tools, clock } = deps;
  const registered = deps.registered ?? registeredSecrets(deps.model, tools);

  const reject = (msg: JsMsg, runId: string | undefined, rejection: Rejection): Promise<void> =>
    rejectRequest(deps, msg, REQUESTS_DLQ_SOURCE, runId, rejection);

  /**
   * The run's root span in this process: its context goes into `run_requested`, so every span after it,
   * in any process and after any crash, continues the same trace.
   */
  function start(msg: JsMsg, request: RunRequest & { runId: string }, redacted?: Uint8Array): Promise<void> {
    return withLogFields({ runId: request.runId }, () =>
      withSpan(
        duraTracer(),
        'dura.run',
        { attributes: { [DURA_ATTRS.runId]: request.runId, 'dura.run.steps_planned': planLength(request) } },
        () => startRun(msg, request, redacted),
      ),
    );
  }

  /** `redacted`: what a dead letter keeps of a request that held secrets in clear. */
  async function startRun(
    msg: JsMsg,
    request: RunRequest & { runId: string },
    redacted: Uint8Array | undefined,
  ): Promise<void> {
    const keep = redacted ? { payload: redacted } : {};
    const { runId } = request;
    const trace = traceparentOf();
    const event = newEvent(
      'run_requested',
      { request },
      {
        id: decisionEventId(runId, 0, 0),
        runId,
        ts: clock().toISOString(),
        correlationId: runId,
        ...(trace ? { trace } : {}),
      },
    );
    try {
      const appended = await store.append(runId, [event], { expectedSeq: 0 });
      if (!appended.duplicate) {
        // The log is this one event: the drive starts from it without reading the log back.
        const seq = appended.seqs[0] as number;
        driver.adopt(runId, [{ ...event, seq }]);
        await driver.drive(runId, { afterSeq: seq, current: true });
        return;
      }
    } catch (err) {
      if (err instanceof EventTooLarge || err instanceof EventOverLimits) {
        await reject(msg, runId, {
          error: { code: 'request_too_large', message: err.message },
          ...keep,
          ...(request.tenant ? { tenant: request.tenant } : {}),
        });
        return;
      }
      if (!(err instanceof ConcurrencyConflict)) throw err;
    }
    const { state } = await driver.load(runId);
    if (state.request === null || canonicalJson(state.request) !== canonicalJson(request)) {
      // The run is someone else's: its id goes on the dead letter, but nothing is appended to its log.
      await reject(msg, runId, {
        ...keep,
        announce: false,
        error: {
          code: 'run_id_conflict',
          message: `run id ${runId} is already used by ${state.request ? 'a different request' : `a run that is ${state.status}`}; submit with a new run id`,
        },
      });
      return;
    }
    await driver.drive(runId);
  }

  return async function handleSubmit(msg: JsMsg): Promise<void> {
    // Through requeues (a tenant at its limit) the request keeps the identity it was first published with.
    const first = firstPublished(msg);
    const headerId = first.msgId;
    // Limits, encoding and schema before anything recursive touches the request, and before its run exists.
    const decoded = decodeMessage(msg.data, RunRequestSchema, 'request', { invalidCode: 'invalid_request' });
    const hint = decoded.runId ?? RunIdSchema.safeParse(headerId).data;
    if (!decoded.ok) {
      // JSON within the limits but not a request may still hold a valid plan's secrets: the dead letter keeps
      // them redacted, and the clear request is erased.
      const body: unknown = decoded.failure.code === 'invalid_request' ? JSON.parse(msg.string()) : undefined;
      const redacted = body === undefined ? body : redactRequest(body, tools, registered);
      const secret = redacted !== body;
      await reject(msg, hint, {
        ...refusal(decoded.failure),
        ...(secret ? { payload: utf8(JSON.stringify(redacted)) } : {}),
      });
      if (secret) await eraseRequest(msg);
      return;
    }
    const parsed = { data: decoded.value };
    const runId = parsed.data.runId ?? hint ?? `run-${first.seq}`;
    const redacted = redactRequest({ ...parsed.data, runId }, tools, registered);
    const secret = canonicalJson(redacted) !== canonicalJson({ ...parsed.data, runId });
    // A request with secrets in clear is dead-lettered redacted, and erased from `dura.submit` once handled.
    const tenant = parsed.data.tenant ? { tenant: parsed.data.tenant } : {};
    const refuse = async (rejection: Rejection): Promise<void> => {
      await reject(
        msg,
        runId,
        secret
          ? { ...rejection, ...tenant, payload: utf8(JSON.stringify(redacted)) }
          : { ...rejection, ...tenant },
      );
      if (secret) await eraseRequest(msg);
    };
    const child = await checkChildRequest(deps, { ...parsed.data, runId });
    if (child.kind === 'forged') {
      // Never the parent's business: it did not ask for this run, so it hears nothing of it.
      await refuse({ error: child.error });
      return;
    }
    const refuseChild = async (rejection: Rejection): Promise<void> => {
      await refuse(rejection);
      if (child.kind === 'child') await child.reportRejected();
    };
    const denied = authorizeRequest(deps.authorization ?? OPEN_AUTHORIZATION, parsed.data, (agent) =>
      pinnedVersionOf(deps.model, { ...parsed.data, runId }, agent),
    );
    if (denied) {
      await refuseChild({
        error: { code: denied.code, message: denied.message },
        ...(denied.issues ? { issues: denied.issues } : {}),
      });
      return;
    }
    const problem = checkPlan(parsed.data, tools);
    if (problem) {
      await refuseChild({ error: { code: problem.code, message: problem.message }, issues: problem.issues });
      return;
    }
    const agentProblem = checkAgent({ ...parsed.data, runId });
    if (agentProblem) {
      await refuseChild({ error: agentProblem });
      return;
    }
    let sealed: ReturnType<typeof sealRequest>;
    try {
      sealed = sealRequest({ ...parsed.data, runId }, tools, deps.secrets, { registered });
    } catch (err) {
      if (!(err instanceof SecretsKeyMissing || err instanceof SecretInChildPlan)) throw err;
      await refuseChild({ error: { code: err.code, message: err.message } });
      return;
    }
    if (!(await admitToTenant(msg, sealed, refuse))) return;
    await start(msg, sealed.request, secret ? utf8(JSON.stringify(redacted)) : undefined);
    if (sealed.changed) await eraseRequest(msg);
  };

  /**
   * Takes a slot of the run's tenant. Child runs are exempt: a parent waiting on its child must never wait
   * for a slot its own tenant holds. Over the limit, the request waits at the back of `dura.submit` (policy
   * `wait`, without using up its deliveries) or is rejected with `tenant_limit` (policy `reject`).
   */
  async function admitToTenant(
    msg: JsMsg,
    sealed: ReturnType<typeof sealRequest>,
    refuse: (rejection: Rejection) => Promise<void>,
  ): Promise<boolean> {
    const { request } = sealed;
    const tenants = deps.tenants;
    if (!tenants || request.parent) return true;
    const tenant = request.tenant ?? DEFAULT_TENANT;
    const limit = tenantLimit(tenants.limits, tenant);
    if (limit === undefined) return true;
    const admission = await tenants.admission.admit(tenant, request.runId, limit);
    if (admission.admitted) return true;
    if (tenants.limits.policy === 'reject') {
      await refuse({
        error: {
          code: TENANT_LIMIT_CODE,
          message: `tenant ${tenant} already has ${admission.inFlight} runs in flight, its limit (PLANNER_TENANT_MAX_RUNS); submit the run again once one of them ends, or ask the operator to raise the limit`,
        },
      });
      return false;
    }
    // A pause before going to the back of the stream, so a waiting request does not spin through the intake.
    const delay = tenants.waitMs?.() ?? Math.round(500 + Math.random() * 500);
    await new Promise((resolve) => setTimeout(resolve, delay));
    throw new RetryLater(
      `tenant ${tenant} has ${admission.inFlight} runs in flight, its limit; run ${request.runId} waits in dura.submit and starts when one of them ends`,
      delay,
      // The copy that waits holds the request sealed, and this message, which held it in clear, is erased.
      sealed.changed
        ? { requeue: true, data: utf8(JSON.stringify(request)), requeued: () => eraseRequest(msg) }
        : { requeue: true },
    );
  }

  async function eraseRequest(msg: JsMsg): Promise<void> {
    await deps.erase?.(msg.seq);
  }

  function utf8(text: string): Uint8Array {
    return new TextEncoder().encode(text);
  }

  function checkAgent(
    request: RunRequest & { runId: string },
  ): { code: string; message: string } | undefined {
    if (request.agent.kind !== 'agent' || !deps.model?.start) return undefined;
    try {
      deps.model.start(request);
      return undefined;
    } catch (err) {
      if (err instanceof DuraError && !err.retryable) return { code: err.code, message: err.message };
      throw err;
    }
  }
}
