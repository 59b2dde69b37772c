// DESIGN crash point 6: the projector process is SIGKILLed in the middle of applying a batch (after the
// event rows were written, before its runs and checkpoint were), once while following a live run and once
// while catching up on a whole run in one batch. The read model must equal the fold of the log afterwards.
import { describe, expect, it } from 'vitest';
import {
  expectKilledAt,
  expectRecovered,
  paymentPlan,
  useCrashSystem,
  watchToEnd,
  type CrashSystem,
} from './crash-harness';

const crash = useCrashSystem(['planner', 'tool-gateway']);

/** The stored position, and the highest event row: one transaction writes both, so they never disagree. */
async function projectionPosition(sys: CrashSystem): Promise<{ checkpoint: number; maxEventSeq: number }> {
  const [row] = await sys.system.sql<{ checkpoint: string | null; max_seq: string | null }[]>`
    select (select max(last_seq) from projector_checkpoints) as checkpoint,
           (select max(seq) from run_events) as max_seq`;
  return { checkpoint: Number(row?.checkpoint ?? 0), maxEventSeq: Number(row?.max_seq ?? 0) };
}

describe('a projector killed with SIGKILL mid-batch', () => {
  it('while following a live run: the run does not wait for it, and the restarted projector catches up exactly', async () => {
    const sys = crash();
    const request = paymentPlan('crash-projector-live');
    // No linger: the first batch is written as soon as the run's first event is in, so a second batch
    // exists whatever the host's speed (with the default linger, a fast run fits into one or two batches).
    await sys.restart('projector', 'projector.mid-batch:2', { PROJECTOR_LINGER_MS: '0' });
    await sys.submit(request);
    await expectKilledAt(sys, 'projector', 'projector.mid-batch:2');

    const position = await projectionPosition(sys);
    expect(position.maxEventSeq).toBe(position.checkpoint);
    // The projector is a reader: the run finishes while it is down.
    const events = await watchToEnd(sys, request.runId);
    expect(events.at(-1)?.type).toBe('run_completed');
    expect(position.checkpoint).toBeLessThan(events.at(-1)?.seq ?? 0);

    await sys.restart('projector');
    await expectRecovered(sys, request.runId, { steps: 5 });
  });

  it('while catching up on a whole run in one batch: nothing of the killed batch survives, and replay applies it once', async () => {
    const sys = crash();
    const request = paymentPlan('crash-projector-catch-up');
    await sys.proc('projector').kill('SIGTERM');
    await sys.submit(request);
    const events = await watchToEnd(sys, request.runId);
    expect(events.at(-1)?.type).toBe('run_completed');
    const before = await projectionPosition(sys);

    await sys.restart('projector', 'projector.mid-batch:1');
    await expectKilledAt(sys, 'projector', 'projector.mid-batch:1');
    expect(await projectionPosition(sys)).toEqual(before);
    const rows = await sys.system.sql`select 1 from run_events where run_id = ${request.runId}`;
    expect(rows).toHaveLength(0);

    await sys.restart('projector');
    const log = await expectRecovered(sys, request.runId, { steps: 5 });
    const counted = await sys.system.sql<{ n: string }[]>`
      select count(*) as n from run_events where run_id = ${request.runId}`;
    expect(Number(counted[0]?.n)).toBe(log.length);
  });
});
