import { useQuery } from '@tanstack/react-query';
import { FlowLimitsResponseSchema } from '@dura/contracts';
import { api } from './http';

/** How often the Limits page reads the limits again. */
export const LIMITS_REFRESH_MS = 3_000;

/** Model limits and concurrency keys with their state now (`GET /flow/limits`), read again every few seconds. */
export const useFlowLimits = () =>
  useQuery({
    queryKey: ['flow-limits'],
    queryFn: ({ signal }) => api(FlowLimitsResponseSchema, '/flow/limits', { signal }),
    refetchInterval: LIMITS_REFRESH_MS,
  });
