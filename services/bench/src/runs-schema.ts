// The figures of runs driven through the deployed services (A, B, F and the growth scenarios): per-step
// timings from the stream's store times, and CPU per step by process group.
import * as z from 'zod';
import { DistributionSchema, ModeSchema } from './distribution-schema';

/** Per-step figures read from the stream's own timestamps (the server's store time of each event). */
export const StepTimingsSchema = z.object({
  /** `tool_call_requested` stored → its `tool_call_completed` stored. */
  intentToObservationMs: DistributionSchema,
  /** `tool_call_requested` of step n → of step n+1 (or `run_completed`): the whole step, planner included. */
  stepCycleMs: DistributionSchema,
});

/**
 * CPU milliseconds (user + system, from /proc) per completed step, by process group: each service kind
 * (every replica's process tree), `nats-server`, `postgres` and `bench` (the driver's own process). Each group
 * is counted per process tree over the measured window: processes alive at its end less the same processes'
 * counters at its start, plus what processes that ended within it handed to their parents' reaped-children
 * counters, so connections Postgres opened and closed during the window count.
 */
export const CpuMsPerStepSchema = z.record(z.string(), z.number().nonnegative());

/** How the CPU figures were counted: the processes each group had, and the Postgres server's split. */
export const CpuDetailSchema = z.object({
  method: z.string(),
  /** /proc was read at the window's start, every `pollMs` (`polls` times) and at its end. */
  pollMs: z.number().int().positive(),
  polls: z.number().int().nonnegative(),
  processes: z.record(
    z.string(),
    z.object({
      atStart: z.number().int().nonnegative(),
      atEnd: z.number().int().nonnegative(),
      /** Distinct processes seen at the start, in a poll or at the end (short-lived ones between polls are not). */
      seen: z.number().int().nonnegative(),
      /** Of those seen, how many were not there at the start, and how many were gone at the end. */
      startedWithin: z.number().int().nonnegative(),
      endedWithin: z.number().int().nonnegative(),
      /** Of the group's figure, what came from processes that ended within the window (reaped-children times). */
      reapedMsPerStep: z.number().nonnegative(),
    }),
  ),
  postgres: z.discriminatedUnion('measured', [
    z.object({
      /** The Postgres server runs on this machine: its postmaster's tree is counted. */
      measured: z.literal(true),
      postmasterPid: z.number().int().positive(),
      /** The whole server: postmaster, every backend and auxiliary process, live or ended within the window. */
      serverMsPerStep: z.number().nonnegative(),
      /**
       * What backends of other databases on a shared server were seen to spend (a lower bound), subtracted from
       * the server's figure to give `cpuMsPerStep.postgres`; 0 on a machine that runs only the benchmark.
       */
      otherDatabasesMsPerStep: z.number().nonnegative(),
      otherDatabaseBackends: z.number().int().nonnegative(),
    }),
    /** The server is not on this machine (a container or another host): its CPU is not in the figures. */
    z.object({ measured: z.literal(false) }),
  ]),
});
export type CpuDetail = z.infer<typeof CpuDetailSchema>;

export const ThroughputSchema = StepTimingsSchema.extend({
  mode: ModeSchema,
  runs: z.number().int(),
  steps: z.number().int(),
  inFlight: z.number().int(),
  gateways: z.number().int(),
  planners: z.number().int(),
  /** Set when the planners and gateways ran as this many workers (one process each). */
  workers: z.number().int().optional(),
  completedSteps: z.number().int(),
  /** First `run_requested` → last `run_completed`, stream time. */
  elapsedMs: z.number().nonnegative(),
  stepsPerSecond: z.number().nonnegative(),
  runsFailed: z.number().int(),
  cpuMsPerStep: CpuMsPerStepSchema,
  cpu: CpuDetailSchema,
});
export type ThroughputResult = z.infer<typeof ThroughputSchema>;
