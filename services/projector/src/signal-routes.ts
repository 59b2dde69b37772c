import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { eq } from 'drizzle-orm';
import * as z from 'zod';
import {
  DuraError,
  JsonValueSchema,
  RunIdSchema,
  SIGNAL_VERSION,
  SUBJECTS,
  type SignalRequest,
} from '@dura/contracts';
import { CANCEL_SIGNAL, isTerminal, type RunStatus } from '@dura/core';
import type { HttpResponse } from '@dura/service-kit';
import type { Db } from '@dura/db';
import { createRunReader, mapAppendError } from '@dura/event-store';
import { requireScope, type Caller } from './auth/caller';
import type { ApiRoute } from './auth/guard';
import { publishCommand } from './command-door';
import { runIdParam } from './query-params';
import { readMessageBody } from './request-body';
import { assertVisible } from './run-access';
import { runs } from './db/schema';

/** A signal or cancel body is a few fields; anything larger is a mistake or an attack. */
const MAX_BODY_BYTES = 64 * 1024;

/** Body of `POST /runs/:id/signals`. */
export const SignalBodySchema = z
  .object({
    name: z.string().min(1).max(200),
    payload: JsonValueSchema.optional(),
    /** Idempotency key: the same id again records nothing new (default: a fresh id). */
    signalId: z.string().min(1).max(200).optional(),
  })
  .strict();

/** Body of `POST /runs/:id/cancel` (may be empty). */
export const CancelBodySchema = z
  .object({ reason: z.string().min(1).max(2000).optional(), signalId: z.string().min(1).max(200).optional() })
  .strict();

/** Answer of both signal routes. */
export const SignalAcceptedSchema = z.object({
  runId: RunIdSchema,
  signalId: z.string(),
  duplicate: z.boolean(),
});

/**
 * `POST /runs/:id/signals` and `POST /runs/:id/cancel`: the HTTP door to the same `dura.signal` intake the
 * SDK publishes to, so that a caller's tenant and scopes decide what it may send. A signal named `cancel`
 * needs scope `cancel`, like the cancel route.
 */
export function signalRoutes(
  deps: { db: Db; js: JetStreamClient; jsm: JetStreamManager },
  unknownRun: (id: string) => Error,
): ApiRoute[] {
  const reader = createRunReader(deps.jsm);

  /** 404 for a run with no events in the log, 409 for one that ended: a signal would change nothing. */
  const assertOpen = async (runId: string): Promise<void> => {
    const [row] = await deps.db.select({ status: runs.status }).from(runs).where(eq(runs.runId, runId));
    if (row) {
      if (isTerminal(row.status as RunStatus))
        throw new DuraError(
          'run_ended',
          `run ${runId} is ${row.status}: it takes no more signals (GET /runs/${runId} shows how it ended)`,
        );
      return;
    }
    // Not projected yet: the log itself says whether the run exists.
    const last = await reader.lastSeq(runId).catch((err: unknown) => {
      throw mapAppendError(err, runId, undefined);
    });
    if (last === 0) throw unknownRun(runId);
  };
  const send = async (caller: Caller, signal: SignalRequest): Promise<HttpResponse> => {
    await assertVisible(deps.db, caller, signal.runId, () => unknownRun(signal.runId));
    await assertOpen(signal.runId);
    const ack = await publishCommand(deps.js, {
      subject: SUBJECTS.signal,
      body: signal,
      msgID: `signal:${signal.runId}:${signal.signalId}`,
      runId: signal.runId,
      what: `the signal "${signal.name}" for run ${signal.runId}`,
    });
    return {
      status: 202,
      body: { runId: signal.runId, signalId: signal.signalId, duplicate: ack.duplicate },
    };
  };
  /**
   * `POST path`: checks the run id, reads the body (`what`, `{}` when empty and `emptyIsObject`) and sends the
   * signal `signalOf` makes of it, under the body's `signalId` or a fresh one.
   */
  const signalRoute = <S extends z.ZodType<{ signalId?: string | undefined }>>(
    path: string,
    scope: 'signal' | 'cancel',
    schema: S,
    what: string,
    emptyIsObject: boolean,
    signalOf: (body: z.infer<S>, caller: Caller) => Pick<SignalRequest, 'name' | 'payload'>,
  ): ApiRoute => ({
    method: 'POST',
    path,
    scope,
    async handle({ params, req, caller }) {
      const runId = runIdParam(params);
      const body = await readMessageBody(req, schema, what, "the signal's fields", {
        maxBytes: MAX_BODY_BYTES,
        emptyIsObject,
      });
      const { signalId = freshId() } = body;
      return send(caller, { v: SIGNAL_VERSION, runId, signalId, ...signalOf(body, caller) });
    },
  });
  return [
    signalRoute('/runs/:id/signals', 'signal', SignalBodySchema, 'a signal', false, (body, caller) => {
      if (body.name === CANCEL_SIGNAL) requireScope(caller, 'cancel', 'a signal named "cancel"');
      return { name: body.name, ...(body.payload === undefined ? {} : { payload: body.payload }) };
    }),
    signalRoute('/runs/:id/cancel', 'cancel', CancelBodySchema, 'a cancel request', true, (body, caller) => ({
      name: CANCEL_SIGNAL,
      payload: { reason: body.reason ?? `cancelled through the API by ${caller.name}` },
    })),
  ];
}

const freshId = (): string => `sig_${crypto.randomUUID().replaceAll('-', '')}`;
