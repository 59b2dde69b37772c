// Shared by the timer e2e files (agent-timers, timer-clock): the plan of a run that sleeps and then charges,
// and the gateway's `timers` rows of a run.
import type { CrashSystem, PlanRequest } from './crash-harness';

/** A scripted run that sleeps `seconds` (`dura.sleep`) and then charges `amount` through the witness. */
export function sleepThenCharge(runId: string, seconds: number, amount: number): PlanRequest {
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: [
        { tool: 'dura.sleep', args: { seconds } },
        { tool: 'pay.charge', args: { amount } },
      ],
    },
  };
}

export interface TimerRow {
  wait_id: string;
  due_at: Date;
  fired_at: Date | null;
}

/** The run's rows of the gateway's `timers` table. */
export function timerRows(sys: CrashSystem, runId: string): Promise<TimerRow[]> {
  return sys.system.sql<TimerRow[]>`
    select wait_id, due_at, fired_at from timers where run_id = ${runId} order by wait_id`;
}
