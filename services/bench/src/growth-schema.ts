// The growth scenarios P, Q, R and S: what a step costs as runs grow longer, as more of them are in flight, when
// a run fans out to child runs, and when the log is replicated on three nodes.
import * as z from 'zod';
import { DistributionSchema, ModeSchema } from './distribution-schema';
import { ThroughputSchema } from './runs-schema';

/** How the last point compares with the first: 1.0 is no growth. */
const GrowthSchema = z.object({
  /** CPU ms per step of every process (the bench driver included), last point over first. */
  cpuMsPerStep: z.number().nonnegative(),
  /** Step cycle p50, last point over first. */
  stepCycleP50: z.number().nonnegative(),
  /** Steps per second, last point over first. */
  stepsPerSecond: z.number().nonnegative(),
});
export type Growth = z.infer<typeof GrowthSchema>;

/**
 * P and Q: B at each point of a curve, each on a fresh deployment. P: runs of 10, 100 and 1,000 steps, the same
 * steps and runs in flight at each length. Q: more and more runs in flight.
 */
const CurveSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  points: z.array(ThroughputSchema),
  growth: GrowthSchema,
});
export type Curve = z.infer<typeof CurveSchema>;

/**
 * R: parent runs, one at a time (`runs`), each starting `children` child runs in one decision and waiting for
 * them. Steps, timings and steps per second are the children's (a parent's calls resolve by its children's
 * reports); CPU is counted from the first parent's submit until the projector folded the last event.
 */
const FanOutSchema = ThroughputSchema.extend({
  note: z.string(),
  children: z.number().int(),
  /** Echo steps of each child run. */
  childSteps: z.number().int(),
  /** A parent's `run_requested` stored → its `run_completed` stored: its children's whole work. */
  parentWallMs: DistributionSchema,
  /** A child's `run_requested` stored → its `run_completed` stored. */
  childWallMs: DistributionSchema,
  /** The same child runs submitted directly, `children` in flight, on the same deployment: no parent. */
  direct: ThroughputSchema,
});

/** S: B on one nats-server (R1), then on a 3-node JetStream cluster with every stream R3. */
const ReplicationSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  points: z.array(
    ThroughputSchema.extend({
      natsNodes: z.number().int().positive(),
      /** Replicas of the runs stream, read from the server after the services created it. */
      streamReplicas: z.number().int().positive(),
    }),
  ),
  growth: GrowthSchema,
});

export const GrowthScenariosSchema = {
  history: CurveSchema.optional(),
  inflight: CurveSchema.optional(),
  fanout: FanOutSchema.optional(),
  replication: ReplicationSchema.optional(),
};
