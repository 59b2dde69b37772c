/**
 * Failpoints for fault tests: `failpoint('gateway.after-effect')` kills this process with SIGKILL right there
 * when the environment variable DURA_FAILPOINT names that point, and does nothing otherwise.
 * `DURA_FAILPOINT=name:N` fires on the N-th time the point is reached (default: the first).
 */
export const FAILPOINTS = [
  'planner.after-model',
  'planner.after-intent',
  /** A model call's worst case is reserved in the log; the model was not asked yet. */
  'planner.after-reserve',
  /** A model call is admitted under the model limits (its slots taken); the model was not asked yet. */
  'planner.after-admit',
  /** A summary of older steps is recorded; the decision it was made for is not. */
  'planner.after-summary',
  /** A wait (timer, signal, approval, child) is recorded; its timer task or child request is not out yet. */
  'planner.after-wait',
  /** A cancellation is recorded; the gateways are not told yet. */
  'planner.after-cancel',
  /** A child run finished; its parent has not been told yet. */
  'planner.before-parent-report',
  /** A schedule's tick is decided (written to its record); its run is not published yet. */
  'planner.schedule-after-decide',
  /** An event trigger's run request is published; the event message is not acknowledged yet. */
  'planner.trigger-after-submit',
  /** A debounce window is closed (its firing written to its gate record); its run is not published yet. */
  'planner.gate-after-close',
  'gateway.after-effect',
  'gateway.after-commit',
  'relay.after-publish',
  'projector.mid-batch',
] as const;
export type FailpointName = (typeof FAILPOINTS)[number];

const hits = new Map<string, number>();
/** DURA_FAILPOINT as the process started with it: read once, since points sit on every step's path. */
let armed: { name: string; nth: number } | null | undefined;

export function failpoint(name: FailpointName): void {
  if (armed === undefined) {
    const spec = process.env.DURA_FAILPOINT;
    const [wanted, nth] = spec ? spec.split(':') : [];
    armed = wanted ? { name: wanted, nth: Number(nth ?? 1) } : null;
  }
  if (armed?.name !== name) return;
  const count = (hits.get(name) ?? 0) + 1;
  hits.set(name, count);
  if (count !== armed.nth) return;
  process.stderr.write(`failpoint ${name} reached (hit ${count}): SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
}
