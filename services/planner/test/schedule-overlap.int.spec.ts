// Overlap policies on a real planner and NATS: a schedule every second whose runs wait for a signal, so each
// tick after the first finds the last run still going.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createDuraClient, type DuraClient } from '@dura/client';
import { scheduleRunId, type OverlapPolicy, type ScheduleRecord } from '@dura/contracts';
import { fold } from '@dura/core';
import { createScheduleStore } from '@dura/event-store';
import { useTestInfra } from '@dura/testing';
import { eventually } from './support';
import { usePlanner } from './planner-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const env = usePlanner(infra, { schedules: { pollMs: 100 } });
let client: DuraClient;

beforeAll(() => {
  client = createDuraClient(env.setup);
});

async function statusOf(runId: string): Promise<string> {
  const events = await env.setup.store.read(runId);
  return events.length === 0 ? 'none' : fold(events).status;
}

async function create(id: string, overlap: OverlapPolicy): Promise<void> {
  await createScheduleStore({ js: env.setup.js }).create(
    {
      id,
      tenant: 'acme',
      everyMs: 1000,
      overlap,
      request: {
        v: 1,
        agent: { kind: 'scripted', steps: [{ tool: 'dura.wait_for_signal', args: { name: 'go' } }] },
      },
    },
    Date.now(),
  );
}

/** Waits until the schedule's history satisfies `done`, then pauses it and returns the settled record. */
async function until(
  id: string,
  done: (r: ScheduleRecord) => boolean,
  what: string,
): Promise<ScheduleRecord> {
  return eventually(
    async () => {
      const record = await client.schedules.get(id);
      if (done(record) && record.pending.start.length === 0) return record;
      // Named in the timeout's message: where the schedule stood.
      throw new Error(`history ${actions(record).join(',')}, pending ${JSON.stringify(record.pending)}`);
    },
    what,
    30_000,
  );
}

const actions = (r: ScheduleRecord) => r.history.map((h) => h.action);
const count = (r: ScheduleRecord, action: string) => actions(r).filter((a) => a === action).length;

describe('overlap policies', () => {
  it('skip: ticks while the run waits are skipped; once it ends the next tick starts a run', async () => {
    await create('ov_skip', 'skip');
    const first = await until('ov_skip', (r) => count(r, 'skipped') >= 2, 'two ticks skipped');
    const [a] = first.history.filter((h) => h.action === 'started');
    expect(a).toBeDefined();
    expect(actions(first).slice(0, 3)).toEqual(['started', 'skipped', 'skipped']);
    await eventually(async () => ((await statusOf(a!.runId)) === 'waiting' ? true : undefined), 'a waits');
    await client.signal(a!.runId, 'go');
    const after = await until('ov_skip', (r) => count(r, 'started') >= 2, 'a second run');
    await client.schedules.pause('ov_skip');
    const started = after.history.filter((h) => h.action === 'started');
    expect(await statusOf(a!.runId)).toBe('completed');
    expect(['waiting', 'running', 'pending', 'none']).toContain(await statusOf(started[1]!.runId));
  });

  it('buffer_one: keeps one tick waiting and starts it when the run ends; later ticks are skipped', async () => {
    await create('ov_buffer', 'buffer_one');
    const waiting = await until('ov_buffer', (r) => count(r, 'skipped') >= 1, 'a tick buffered, one skipped');
    expect(actions(waiting).slice(0, 3)).toEqual(['started', 'buffered', 'skipped']);
    const bufferedTick = waiting.buffered;
    expect(bufferedTick).toBeDefined();
    const a = waiting.history[0]!.runId;
    await eventually(async () => ((await statusOf(a)) === 'waiting' ? true : undefined), 'a waits');
    await client.signal(a, 'go');
    const after = await until(
      'ov_buffer',
      (r) => r.buffered === undefined && count(r, 'started') >= 2,
      'buffered run',
    );
    await client.schedules.pause('ov_buffer');
    const second = after.history.filter((h) => h.action === 'started')[1];
    expect(second?.tick).toBe(bufferedTick);
    await eventually(
      async () => ((await statusOf(second!.runId)) === 'waiting' ? true : undefined),
      'b waits',
    );
  });

  it('cancel_previous: each tick cancels the run still waiting and starts its own', async () => {
    await create('ov_cancel', 'cancel_previous');
    const record = await until('ov_cancel', (r) => count(r, 'cancelled_previous') >= 2, 'two ticks replaced');
    await client.schedules.pause('ov_cancel');
    const runs = record.history.map((h) => h.runId);
    // Every run but the newest is cancelled, with the schedule as the reason.
    await eventually(async () => {
      const statuses = await Promise.all(runs.slice(0, -1).map(statusOf));
      return statuses.every((s) => s === 'cancelled') ? statuses : undefined;
    }, 'the replaced runs cancelled');
    const log = await env.setup.store.read(runs[0]!);
    expect(JSON.stringify(log.at(-1))).toMatch(/overlap policy cancel_previous/);
  });
});

describe("a run of another tenant under the next tick's run id", () => {
  it('does not hold the schedule: skip counts only runs the schedule started', async () => {
    const id = 'ov_foreign';
    // The next tick's id, taken first by a run of tenant globex that never ends (as NATS lets a client do).
    const next = Math.ceil((Date.now() + 1500) / 1000) * 1000;
    const taken = scheduleRunId(id, next);
    await client.submitRun({
      runId: taken,
      tenant: 'globex',
      agent: { kind: 'scripted', steps: [{ tool: 'dura.wait_for_signal', args: { name: 'never' } }] },
    });
    await eventually(async () => ((await statusOf(taken)) === 'waiting' ? true : undefined), 'globex waits');
    await createScheduleStore({ js: env.setup.js }).create(
      {
        id,
        tenant: 'acme',
        everyMs: 1000,
        overlap: 'skip',
        request: { v: 1, agent: { kind: 'scripted', steps: [] } },
      },
      next - 500,
    );
    const record = await until(
      id,
      (r) => r.history.filter((h) => h.tick > next && h.action === 'started').length >= 2,
      'two runs after the taken tick',
    );
    await client.schedules.pause(id);
    expect(record.history.filter((h) => h.action === 'skipped')).toEqual([]);
  });
});
