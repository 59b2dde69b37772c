import * as z from 'zod';
import { RunIdSchema } from './ids';
import { GateFieldsSchema } from './run-gate';
import { RUN_REQUEST_VERSION, RunRequestSchema } from './run-request';

// The body and answer of the projector's `POST /runs`, shared by the API, its OpenAPI document and the client.

/**
 * Body of `POST /runs`: a run request as on `dura.submit` (`v` optional; `parent` is the planner's alone), and
 * the gate options of the API: `debounce` (the last request of a key within a window starts the run) and
 * `dedupe` (`skip-if-running`: nothing starts while a run of the key is in flight).
 */
export const SubmitBodySchema = RunRequestSchema.omit({ v: true, parent: true })
  .extend({ v: z.literal(RUN_REQUEST_VERSION).optional(), ...GateFieldsSchema.shape })
  .strict();

/** Answer of `POST /runs`: what happened (started, debounced, skipped), the run id and where to follow it. */
export const SubmitAcceptedSchema = z.object({
  /**
   * `started`: published to the intake (202). `debounced`: held in its key's window, `runId` is the run the
   * window starts at `fireAt` (202). `skipped`: nothing started, `runId` is the key's run in flight (200).
   */
  outcome: z.enum(['started', 'debounced', 'skipped']),
  runId: RunIdSchema,
  /** True when this run id was submitted before with the same body: nothing new starts. */
  duplicate: z.boolean(),
  /** The gate key (`debounce` / `dedupe`), when the request named one. */
  key: z.string().optional(),
  /** `debounced`: when the window ends, unless a later request of the key pushes it out. */
  fireAt: z.string().optional(),
  /** `debounced`: requests taken into the window so far, this one included (the last one wins). */
  requests: z.number().int().optional(),
  /** `debounced`, `skipped`: what happened, in words. */
  reason: z.string().optional(),
  links: z.object({ run: z.string(), events: z.string(), stream: z.string() }),
});

export type SubmitBody = z.input<typeof SubmitBodySchema>;
export type SubmitAccepted = z.infer<typeof SubmitAcceptedSchema>;
