import * as z from 'zod';

/** Percentiles of a sample, in milliseconds. */
export const DistributionSchema = z.object({
  count: z.number().int().nonnegative(),
  p50: z.number().nonnegative(),
  p90: z.number().nonnegative(),
  p99: z.number().nonnegative(),
  max: z.number().nonnegative(),
  mean: z.number().nonnegative(),
});
export type Distribution = z.infer<typeof DistributionSchema>;

/** Where the services ran: as processes, or in the bench's own process. */
export const ModeSchema = z.enum(['processes', 'in-process']);
