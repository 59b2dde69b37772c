// Shared by the crash-point tests (crash-planner, crash-gateway, crash-worker): arm a failpoint, submit,
// prove the process died there; and read what the gateway's ledger holds of a call.
import {
  expectKilledAt,
  paymentPlan,
  type CrashSystem,
  type FailpointSpec,
  type PlanRequest,
  type ServiceName,
} from './crash-harness';

/** Restarts `name` with `failpoint` armed, submits `request`, expects `name` SIGKILLed there; answers `request`. */
export async function killedAt<R extends PlanRequest>(
  sys: CrashSystem,
  name: ServiceName,
  failpoint: FailpointSpec,
  request: R,
): Promise<R> {
  await sys.restart(name, failpoint);
  await sys.submit(request);
  await expectKilledAt(sys, name, failpoint);
  return request;
}

/** `killedAt` for `name` and a payment run (`paymentPlan(runId)`): `(sys, runId, failpoint)`, answering the request. */
export const killerOf =
  (name: ServiceName) =>
  (sys: CrashSystem, runId: string, failpoint: FailpointSpec): Promise<PlanRequest> =>
    killedAt(sys, name, failpoint, paymentPlan(runId));

/** The gateway's ledger row of the call under `key` (its status and attempts), if it has one. */
export async function effectRow(sys: CrashSystem, key: string) {
  const [row] = await sys.system.sql<{ status: string; attempts: number }[]>`
    select status, attempts from effects where idempotency_key = ${key}`;
  return row;
}
