import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import { EVENT_TYPES, SUBJECTS, type RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { createEventStore } from '@dura/event-store';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { echoPlan, eventually, getJson, openSystem, startService, type SystemHandles } from './system';

const infra = useTestInfra();
let system: SystemHandles;
const processes: ManagedProcess[] = [];

beforeAll(async () => {
  system = await openSystem(infra().nats.url, infra().db.url);
  for (const name of ['planner', 'tool-gateway', 'projector'] as const)
    processes.push(await startService(name, system.env));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  await system?.close();
});

describe('a 5-step run through three separate service processes', () => {
  it('completes, in order, with the projection equal to the fold of the log and one effect per key', async () => {
    const runId = 'e2e-five-steps';
    // A plain NATS client, as a Go or Python producer would publish it.
    const ack = await system.js.publish(SUBJECTS.submit, JSON.stringify(echoPlan(runId, 5)), {
      msgID: runId,
    });
    expect(ack.duplicate).toBe(false);

    const client = createDuraClient(system);
    const watched: RunEvent[] = [];
    for await (const event of client.watchRun(runId)) watched.push(event);

    expect(watched.map((e) => e.type)).toEqual([
      'run_requested',
      'run_started',
      ...Array.from({ length: 5 }, () => ['thought', 'tool_call_requested', 'tool_call_completed']).flat(),
      'thought',
      'run_completed',
    ]);
    for (const [i, event] of watched.entries()) {
      expect(EVENT_TYPES).toContain(event.type);
      expect(event.meta.runId).toBe(runId);
      if (i > 0) expect(event.seq).toBeGreaterThan((watched[i - 1] as RunEvent).seq);
    }
    const results = watched.flatMap((e) => (e.type === 'tool_call_completed' ? [e.data.result] : []));
    expect(results[4]).toEqual({ step: 5, previous: 4 });

    const fromStream = await createEventStore(system).read(runId);
    expect(fromStream).toEqual(watched);
    const folded = fold(fromStream);
    expect(folded.status).toBe('completed');
    expect(folded.steps).toBe(5);

    const projected = await eventually(
      async () => {
        const { status, body } = await getJson(`${system.apiUrl}/runs/${runId}`);
        return status === 200 && (body as { lastSeq: number }).lastSeq === folded.lastSeq ? body : undefined;
      },
      'the projector to reach the end of the run',
      30_000,
    );
    expect(projected).toEqual(JSON.parse(JSON.stringify(folded)));

    const { body: page } = await getJson(`${system.apiUrl}/runs/${runId}/events?limit=1000`);
    expect((page as { events: RunEvent[] }).events).toEqual(JSON.parse(JSON.stringify(watched)));

    // One observation per key. `echo` is read-only and each call went straight to the gateway (a direct call)
    // on its first try: its result is kept in the log alone, with no ledger row (docs/tools.md).
    const intentKeys = watched.flatMap((e) =>
      e.type === 'tool_call_requested' ? [e.data.idempotencyKey] : [],
    );
    const observedKeys = watched.flatMap((e) =>
      e.type === 'tool_call_completed' ? [e.data.idempotencyKey] : [],
    );
    expect(observedKeys).toEqual(intentKeys);
    expect(new Set(intentKeys).size).toBe(5);
    const effects = await system.sql`select idempotency_key from effects where run_id = ${runId}`;
    expect(effects).toHaveLength(0);
  });

  it('treats a resubmitted request with the same run id as the same run', async () => {
    const runId = 'e2e-resubmit';
    const client = createDuraClient(system);
    await client.submitRun({ ...echoPlan(runId, 2), v: 1 } as never);
    const first: RunEvent[] = [];
    for await (const event of client.watchRun(runId)) first.push(event);
    const again = await client.submitRun({ ...echoPlan(runId, 2), v: 1 } as never);
    expect(again.duplicate).toBe(true);
    const state = await client.getRun(runId);
    expect(state.status).toBe('completed');
    expect(state.calls).toHaveLength(2);
    // Nothing ran again: the log is the one the first submission left, two calls and two results.
    const log = await createEventStore(system).read(runId);
    expect(log).toEqual(first);
    expect(log.filter((e) => e.type === 'tool_call_completed')).toHaveLength(2);
  });
});
