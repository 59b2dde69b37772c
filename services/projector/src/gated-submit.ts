import type { JetStreamClient } from '@nats-io/jetstream';
import { eq } from 'drizzle-orm';
import {
  GATE_ASK_VERSION,
  gateKeyIssue,
  SUBJECTS,
  type Debounce,
  type Dedupe,
  type GateAnswer,
  type RunRequest,
} from '@dura/contracts';
import { isTerminal, type RunPhase, type RunStatus } from '@dura/core';
import type { Db } from '@dura/db';
import {
  askGate,
  connectionOf,
  createRunGates,
  GATE_ASK_TIMEOUT_MS,
  gateKeyToken,
  GateUnanswered,
  type RunGates,
} from '@dura/event-store';
import { duraMeter, type HttpResponse } from '@dura/service-kit';
import { DURA_METRICS, declareCounter } from '@dura/telemetry';
import { doorWrite } from './command-door';
import { runs } from './db/schema';
import { tenantWindowRunId } from './tenant-ids';

/** What `POST /runs` asked of the gate, and what it starts when the gate lets it. */
export interface GatedRequest {
  tenant: string;
  debounce: Debounce | undefined;
  dedupe: Dedupe | undefined;
  /** The caller's key (`Idempotency-Key` or `runId`), if any. */
  key: string | undefined;
  /** The run id a start at once gets. */
  runId: string;
  request: (runId: string) => RunRequest;
  /** The ordinary submit of the run id (idempotency record and publish): its answer is the start's. */
  submit: (runId: string) => Promise<HttpResponse>;
}

const refusal = (status: number, code: string, message: string): HttpResponse => ({
  status,
  body: { error: { code, message } },
});

const links = (runId: string) => {
  const path = `/runs/${runId}`;
  return { run: path, events: `${path}/events`, stream: `${path}/stream` };
};

const gatesByConnection = new WeakMap<JetStreamClient, RunGates>();

/** The gate records shared with the planners; a run's phase read from the projection (unseen until projected). */
function gatesOf(deps: { db: Db; js: JetStreamClient }): RunGates {
  let gates = gatesByConnection.get(deps.js);
  if (!gates) {
    gates = createRunGates({
      js: deps.js,
      phaseOf: async (runId): Promise<RunPhase> => {
        const [row] = await deps.db.select({ status: runs.status }).from(runs).where(eq(runs.runId, runId));
        if (!row) return 'unseen';
        return isTerminal(row.status as RunStatus) ? 'ended' : 'in-flight';
      },
    });
    gatesByConnection.set(deps.js, gates);
  }
  return gates;
}

const metrics = (() => {
  let counters: { debounced: (scope: string) => void; skipped: (scope: string) => void } | undefined;
  return () => {
    if (!counters) {
      const debounced = declareCounter(duraMeter(), DURA_METRICS.gateDebounced);
      const skipped = declareCounter(duraMeter(), DURA_METRICS.gateSkipped);
      counters = {
        debounced: (scope) => debounced.add(1, { scope }),
        skipped: (scope) => skipped.add(1, { scope }),
      };
    }
    return counters;
  };
})();

/**
 * `POST /runs` with `debounce` and/or `dedupe`: the tenant's key is decided on in `dura_run_gates` with
 * compare-and-set, as the planners decide an event trigger's. The answer always says what happened: `202
 * started` (the ordinary answer), `202 debounced` (the run id its window will start, and when), or `200
 * skipped` naming the run of the key in flight. A debounced request is handed to a planner, which seals it
 * before its window keeps it; the window is ended by the planners' gate pass.
 */
export async function gatedSubmit(
  deps: { db: Db; js: JetStreamClient },
  asked: GatedRequest,
): Promise<HttpResponse> {
  const { debounce, dedupe, tenant } = asked;
  const keys = gateKeyIssue({ debounce, dedupe });
  if (keys) return refusal(400, 'bad_body', keys);
  if (debounce && asked.key !== undefined)
    return refusal(
      400,
      'bad_body',
      'a debounced request takes the run id of its window: leave out runId and the Idempotency-Key (the answer names the run id)',
    );
  const key = (debounce?.key ?? dedupe?.key) as string;
  const scope = `runs:${tenant}`;
  if (debounce) return debounced(deps, asked, { scope, key, windowMs: debounce.windowMs });
  const outcome = await gatesOf(deps).arrive({
    scope,
    key,
    request: asked.request,
    source: asked.runId,
    runId: asked.runId,
    skipIfRunning: true,
  });
  switch (outcome.kind) {
    case 'started':
      return asked.submit(outcome.runId);
    case 'skipped':
      // Its own run, asked again under the same key: the ordinary duplicate answer.
      if (outcome.runningRunId === asked.runId) return asked.submit(asked.runId);
      metrics().skipped(scope);
      return {
        status: 200,
        body: {
          outcome: 'skipped',
          runId: outcome.runningRunId,
          duplicate: false,
          key,
          reason: `run ${outcome.runningRunId} of key "${key}" is in flight (dedupe skip-if-running): nothing started`,
          links: links(outcome.runningRunId),
        },
      };
    default:
      // Only a debounce keeps a window, and only events (with a stream sequence) can be stale.
      return refusal(500, 'internal', `a request without debounce was found ${outcome.kind} by its gate`);
  }
}

/**
 * A debounced request is kept in its key's window until the window ends, so it is handed to a planner, which
 * seals its secrets before the window keeps it (the projector holds no secrets key). No planner answering in
 * time is a 503 that keeps nothing; a planner refusing it (it cannot be sealed) is its reason.
 */
async function debounced(
  deps: { js: JetStreamClient },
  asked: GatedRequest,
  gate: { scope: string; key: string; windowMs: number },
): Promise<HttpResponse> {
  const { scope, key } = gate;
  const nc = connectionOf(deps.js);
  let answer: GateAnswer;
  try {
    if (!nc) throw new GateUnanswered('no_responders', 0);
    answer = await doorWrite({ subject: SUBJECTS.runGateAsk, what: 'the debounced request' }, () =>
      askGate(nc, {
        v: GATE_ASK_VERSION,
        scope,
        key,
        windowMs: gate.windowMs,
        skipIfRunning: asked.dedupe !== undefined,
        source: asked.runId,
        windowRunIdPrefix: tenantWindowRunId(asked.tenant, `deb-${gateKeyToken(scope, key)}-`),
        request: asked.request(asked.runId),
      }),
    );
  } catch (err) {
    if (!(err instanceof GateUnanswered)) throw err;
    return {
      status: 503,
      headers: { 'retry-after': String(GATE_ASK_TIMEOUT_MS / 1000) },
      body: {
        error: {
          code: 'gate_unanswered',
          message: `${err.message}, so the debounced request was not kept: a planner seals a debounced request's secrets before its window keeps it, and the projector holds no secrets key. Start a planner (check that its NATS user may subscribe to "${SUBJECTS.runGateAsk}" and the projector's may publish to it: docs/security/nats.md), then retry; or send the request without debounce`,
        },
      },
    };
  }
  if ('refused' in answer) {
    const { code, message, retryable } = answer.refused;
    return refusal(retryable ? 503 : 400, code, `the debounced request was not kept: ${message}`);
  }
  const { runId, fireAt, events, replaced } = answer.debounced;
  if (replaced !== undefined) metrics().debounced(scope);
  return {
    status: 202,
    headers: { location: `/runs/${runId}` },
    body: {
      outcome: 'debounced',
      runId,
      duplicate: false,
      key,
      fireAt: new Date(fireAt).toISOString(),
      requests: events,
      reason: `debounced: run ${runId} starts at the end of the window with the last request of key "${key}" (unless skip-if-running finds a run of the key in flight then)`,
      links: links(runId),
    },
  };
}
