import type { Distribution } from './schema';

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/** Nearest-rank percentiles of `samples` (ms); all zero for an empty sample. */
export function distribution(samples: readonly number[]): Distribution {
  if (samples.length === 0) return { count: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  const mean = sorted.reduce((sum, x) => sum + x, 0) / sorted.length;
  return {
    count: sorted.length,
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    max: round(sorted.at(-1) ?? 0),
    mean: round(mean),
  };
}

export { round };
