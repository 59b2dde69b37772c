import * as z from 'zod';
import { DistributionSchema, ModeSchema } from './distribution-schema';

/** Scenario N: what flow control adds to a model call. */
export const AdmissionSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  calls: z.number().int(),
  /** Admission and settle of one call with no limit declared. */
  noLimitMs: DistributionSchema,
  /** With a rate and a concurrency limit declared, one replica admitting. */
  oneReplicaMs: DistributionSchema,
  /** The same limit, three replicas admitting at once. */
  threeReplicasMs: DistributionSchema,
  threeReplicasCallsPerSecond: z.number().nonnegative(),
  /** A rate's line of `callersInLine` (its KV record `recordBytes`): a caller joining it, and one asking once it is full. */
  lineJoin: z
    .object({
      callersInLine: z.number().int(),
      recordBytes: z.number().int().nonnegative(),
      bytesPerCaller: z.number().nonnegative(),
      /** Admission of a caller that joins the line as it fills to `callersInLine` (the record read and written). */
      joinMs: DistributionSchema,
      /** Admission of a caller that finds the line full (the record read, not written). */
      fullLineMs: DistributionSchema,
    })
    .optional(),
});
