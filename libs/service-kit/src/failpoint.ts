/**
 * Failpoints for fault tests: `failpoint('gateway.after-effect')` kills this process with SIGKILL right there
 * when the environment variable DURA_FAILPOINT names that point, and does nothing otherwise.
 * `DURA_FAILPOINT=name:N` fires on the N-th time the point is reached (default: the first).
 */
export const FAILPOINTS = [
  'planner.after-model',
  'planner.after-intent',
  'gateway.after-effect',
  'gateway.after-commit',
  'relay.after-publish',
  'projector.mid-batch',
] as const;
export type FailpointName = (typeof FAILPOINTS)[number];

const hits = new Map<string, number>();

export function failpoint(name: FailpointName): void {
  const spec = process.env.DURA_FAILPOINT;
  if (!spec) return;
  const [wanted, nth] = spec.split(':');
  if (wanted !== name) return;
  const count = (hits.get(name) ?? 0) + 1;
  hits.set(name, count);
  if (count !== Number(nth ?? 1)) return;
  process.stderr.write(`failpoint ${name} reached (hit ${count}): SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
}
