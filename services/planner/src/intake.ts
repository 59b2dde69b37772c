import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import {
  DuraError,
  formatIssues,
  newEvent,
  RunIdSchema,
  RunRequestSchema,
  type RunRequest,
} from '@dura/contracts';
import { canonicalJson, decisionEventId } from '@dura/core';
import { ConcurrencyConflict, type EventStore } from '@dura/event-store';
import { duraTracer, withLogFields, type Logger } from '@dura/service-kit';
import { DURA_ATTRS, traceparentOf, withSpan } from '@dura/telemetry';
import type { ToolRegistry } from '@dura/tools';
import type { Model } from './model';
import { checkPlan } from './plan-check';
import { rejectRequest, type Rejection } from './reject-request';
import type { RunDriver } from './run-driver';

export interface IntakeDeps {
  store: EventStore;
  js: JetStreamClient;
  driver: RunDriver;
  tools: ToolRegistry;
  log: Logger;
  clock: () => Date;
  /** Checks a request naming an agent: an agent or version this planner does not serve is rejected. */
  model?: Model;
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

  const reject = (msg: JsMsg, runId: string | undefined, rejection: Rejection): Promise<void> =>
    rejectRequest(deps, msg, REQUESTS_DLQ_SOURCE, runId, rejection);

  /**
   * The run's root span in this process: its context goes into `run_requested`, so every span after it,
   * in any process and after any crash, continues the same trace.
   */
  function start(msg: JsMsg, request: RunRequest & { runId: string }): Promise<void> {
    return withLogFields({ runId: request.runId }, () =>
      withSpan(
        duraTracer(),
        'dura.run',
        { attributes: { [DURA_ATTRS.runId]: request.runId, 'dura.run.steps_planned': planLength(request) } },
        () => startRun(msg, request),
      ),
    );
  }

  async function startRun(msg: JsMsg, request: RunRequest & { runId: string }): Promise<void> {
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
      await store.append(runId, [event], { expectedSeq: 0 });
    } catch (err) {
      if (!(err instanceof ConcurrencyConflict)) throw err;
    }
    const { state } = await driver.load(runId);
    if (state.request === null || canonicalJson(state.request) !== canonicalJson(request)) {
      await reject(msg, undefined, {
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
    const headerId = msg.headers?.get('Nats-Msg-Id');
    let body: unknown;
    try {
      body = JSON.parse(msg.string());
    } catch (err) {
      const hint = RunIdSchema.safeParse(headerId).data;
      await reject(msg, hint, {
        error: { code: 'bad_json', message: `request is not valid JSON: ${(err as Error).message}` },
      });
      return;
    }
    const hint =
      RunIdSchema.safeParse((body as { runId?: unknown } | null)?.runId).data ??
      RunIdSchema.safeParse(headerId).data;
    const parsed = RunRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issues = formatIssues(parsed.error);
      await reject(msg, hint, {
        error: { code: 'invalid_request', message: 'request does not match the RunRequest schema' },
        issues,
      });
      return;
    }
    const runId = parsed.data.runId ?? hint ?? `run-${msg.seq}`;
    const problem = checkPlan(parsed.data, tools);
    if (problem) {
      await reject(msg, runId, {
        error: { code: problem.code, message: problem.message },
        issues: problem.issues,
      });
      return;
    }
    const agentProblem = checkAgent({ ...parsed.data, runId });
    if (agentProblem) {
      await reject(msg, runId, { error: agentProblem });
      return;
    }
    await start(msg, { ...parsed.data, runId });
  };

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
