import * as z from 'zod';
import { JsonObjectSchema, RunIdSchema, ToolNameSchema } from './ids';
import { PayloadRefSchema } from './payload-ref';

export const TASK_VERSION = 1;

/** A command to the tool gateway: run `tool` once for `idempotencyKey`. Published with msg-id = the key. */
/** A tool task that carries `argsRef`: a gateway that predates it refuses the task instead of running the stand-in. */
export const TOOL_TASK_WITH_REF_VERSION = 2;

export const ToolTaskSchema = z.object({
  v: z.number().int().min(TASK_VERSION).max(TOOL_TASK_WITH_REF_VERSION),
  runId: RunIdSchema,
  callId: z.string().min(1),
  step: z.number().int().positive(),
  tool: ToolNameSchema,
  args: JsonObjectSchema,
  /** Arguments too large for a message: the gateway fetches them from the object store and checks the hash. */
  argsRef: PayloadRefSchema.optional(),
  idempotencyKey: z.string().min(1),
  causationId: z.string().min(1),
  correlationId: z.string().min(1),
  trace: z.string().optional(),
});
export type ToolTask = z.infer<typeof ToolTaskSchema>;

/** A nudge to the planner: the run's log grew past `afterSeq`, fold it and act. Msg-id `<runId>@<afterSeq>`. */
export const DecideTaskSchema = z.object({
  v: z.literal(TASK_VERSION),
  runId: RunIdSchema,
  afterSeq: z.number().int().nonnegative(),
  /**
   * `capacity`: capacity the run waits for came free (a slot, its turn in a rate's line): its wait for capacity
   * is to end now rather than at its timer, by moving that timer (see `TimerTask.wake`).
   */
  reason: z.enum(['started', 'observation', 'signal', 'resume', 'timer', 'child', 'capacity']),
  trace: z.string().optional(),
});
export type DecideTask = z.infer<typeof DecideTaskSchema>;

/**
 * A durable timer: fire `timer_fired { waitId }` on the run's log at `dueAt`. Published by the planner on
 * `dura.task.timer` with msg-id `timer:<runId>:<waitId>`; the gateway keeps it in its `timers` table (no timer
 * in any process's memory) and records the firing through its outbox, so it survives restarts of everything.
 */
export const TimerTaskSchema = z.object({
  v: z.literal(TASK_VERSION),
  runId: RunIdSchema,
  waitId: z.string().min(1),
  dueAt: z.iso.datetime({ offset: true }),
  causationId: z.string().min(1),
  correlationId: z.string().min(1),
  trace: z.string().optional(),
  /**
   * Fire the wait's timer now, if it has not fired yet (`dueAt` is ignored: the gateway's database clock says
   * when now is): a run waiting for capacity that came free sooner. The timer still fires once, so the wait
   * ends once and one drive goes on from it. Published with msg-id `timerWakeMsgId`; a gateway that does not
   * know this field stores the timer as usual and the run goes on at its timer.
   */
  wake: z.boolean().optional(),
});
export type TimerTask = z.infer<typeof TimerTaskSchema>;

export function timerTaskMsgId(runId: string, waitId: string): string {
  return `timer:${runId}:${waitId}`;
}

/** A wake of a wait's timer (`TimerTask.wake`): wakes of one wait within the dedupe window are one message. */
export function timerWakeMsgId(runId: string, waitId: string): string {
  return `${timerTaskMsgId(runId, waitId)}:wake`;
}
