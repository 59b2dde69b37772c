import * as z from 'zod';
import { RunIdSchema } from './ids';
import { ForkChangesSchema } from './fork';

/** What a credential of the projector's API may do: read runs, send signals (approve, reject, named events), cancel runs, submit runs (forks, events), manage schedules and triggers (`schedule`). */
export const API_SCOPES = ['read', 'signal', 'cancel', 'submit', 'schedule'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** `GET /console/session`: who the presented credential is and what it may do, so the console hides the rest. */
export const ConsoleSessionSchema = z.object({
  name: z.string(),
  /** The caller's tenant, or `*` for an operator who sees every tenant. */
  tenant: z.string(),
  scopes: z.array(z.enum(API_SCOPES)),
  /** Link template of the tracing UI with `{traceId}` in it, when one is configured. */
  tracesUrl: z.string().optional(),
});
export type ConsoleSession = z.infer<typeof ConsoleSessionSchema>;

/** Body of `POST /runs/:id/fork`. */
export const ForkBodySchema = z
  .object({
    /** The source's last event to keep. */
    atSeq: z.number().int().positive(),
    /** The new run's id; doubles as the fork's idempotency key (default: a fresh id). */
    runId: RunIdSchema.optional(),
    /** An edited input and/or tool result for the fork; the API records the caller as who edited. */
    edit: ForkChangesSchema.extend({
      toolResult: ForkChangesSchema.shape.toolResult.unwrap().strict().optional(),
    })
      .strict()
      .refine((edit) => edit.input !== undefined || edit.toolResult !== undefined, {
        message: 'an edit changes "input", "toolResult" or both; it names neither',
      })
      .optional(),
  })
  .strict();
export type ForkBody = z.infer<typeof ForkBodySchema>;

/** Answer of `POST /runs/:id/fork`. */
export const ForkAcceptedSchema = z.object({ runId: RunIdSchema, duplicate: z.boolean() });
