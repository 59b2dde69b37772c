import * as z from 'zod';
import { JsonValueSchema, RunIdSchema } from './ids';

export const FORK_VERSION = 1;
/** A fork request that carries an `edit`: a planner that predates edits refuses it instead of dropping the edit. */
export const FORK_WITH_EDIT_VERSION = 2;

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 is 64 lower-case hex digits');
/** Who edited: the API caller's name, or the name a NATS client gives. */
const EditorSchema = z.string().min(1).max(200);

/** What a fork changes in the copy of its source: edited state to resume from. */
export const ForkChangesSchema = z.object({
  /** The fork's `run_requested` carries this input instead of the source's (a fork before the first decision). */
  input: JsonValueSchema.optional(),
  /** The copied `tool_call_completed` of `callId` carries `output` instead of the recorded result. */
  toolResult: z.object({ callId: z.string().min(1).max(200), output: JsonValueSchema }).optional(),
});
export type ForkChanges = z.infer<typeof ForkChangesSchema>;

/** An edit as a fork request carries it: the changes and who made them. */
export const ForkEditSchema = ForkChangesSchema.extend({ by: EditorSchema });
export type ForkEdit = z.infer<typeof ForkEditSchema>;

/** What a fork edited, recorded in its `forkOf`: each value it replaced, by the hash of the original. */
export const ForkEditedSchema = z.object({
  by: EditorSchema,
  /** The input was replaced; `originalSha256` is absent when the source had no input. */
  input: z.object({ originalSha256: Sha256Schema.optional() }).optional(),
  /** The result of `callId` (the source's event at `sourceSeq`) was replaced. */
  toolResult: z
    .object({
      callId: z.string().min(1),
      sourceSeq: z.number().int().positive(),
      originalSha256: Sha256Schema,
    })
    .optional(),
});
export type ForkEdited = z.infer<typeof ForkEditedSchema>;

/** Where a forked run came from: the source run and the last of its events the fork copied. */
export const ForkOfSchema = z.object({
  runId: RunIdSchema,
  /** The source's stream sequence the fork was taken at (that event is the last one copied). */
  atSeq: z.number().int().positive(),
  /** Present when the fork changed what it copied. */
  edited: ForkEditedSchema.optional(),
});
export type ForkOf = z.infer<typeof ForkOfSchema>;

/** On a `tool_call_completed` a fork wrote with an edited result: who edited it and what it replaced. */
export const EditedResultSchema = z.object({
  by: EditorSchema,
  /** The run the original result was copied from, and its event that held it. */
  sourceRunId: RunIdSchema,
  sourceSeq: z.number().int().positive(),
  originalSha256: Sha256Schema,
});
export type EditedResult = z.infer<typeof EditedResultSchema>;

/**
 * What a client publishes on `dura.fork` (msg-id `fork:<runId>`): start a new run whose log is the source's
 * log up to and including the event at `atSeq`, then let the planner drive it. `runId` names the new run
 * and doubles as the fork's idempotency key; without it the planner names it `fork-<request seq>`. `v` is
 * 1, or 2 when `edit` is set.
 */
export const ForkRequestSchema = z
  .object({
    v: z.number().int().min(FORK_VERSION).max(FORK_WITH_EDIT_VERSION),
    sourceRunId: RunIdSchema,
    atSeq: z.number().int().positive(),
    runId: RunIdSchema.optional(),
    edit: ForkEditSchema.optional(),
  })
  .superRefine((request, ctx) => {
    if (request.edit === undefined) return;
    if (request.v < FORK_WITH_EDIT_VERSION)
      ctx.addIssue({
        code: 'custom',
        path: ['v'],
        message: `a fork request with an edit is version ${FORK_WITH_EDIT_VERSION}`,
      });
    if (request.edit.input === undefined && request.edit.toolResult === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['edit'],
        message: 'an edit changes the input, a tool result or both; it names neither',
      });
  });
export type ForkRequest = z.infer<typeof ForkRequestSchema>;
