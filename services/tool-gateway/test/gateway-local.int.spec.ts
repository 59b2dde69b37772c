// Calls run in place (`gateway.local`, a worker's planner driving the run): the same ledger and outbox as a
// tool task, no decide task, and, given the run's last sequence, the observation as stored when it landed
// right behind it.
import { describe, expect, it, vi } from 'vitest';
import { createEventStore } from '@dura/event-store';
import { newEvent } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { countingTool, decideTasks, effectRow, eventually, outboxRows, runLog, toolTask } from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const counter = countingTool('test.count');
const flaky = countingTool('test.flaky', {
  behave: (execution) => {
    if (execution === 1) throw new Error('first attempt fails');
  },
});
const slow = countingTool('test.slow', { delayMs: 600 });
const sys = useGateway(infra, [counter.tool, flaky.tool, slow.tool]);

/** Appends one event to the run so it has a tail, and returns its sequence. */
async function appendMarker(runId: string, id: string): Promise<number> {
  const store = createEventStore({ js: sys.setup.js, jsm: sys.setup.jsm });
  const event = newEvent(
    'signal_received',
    { signalId: id, name: 'marker', payload: null },
    { id, runId, ts: new Date().toISOString(), correlationId: runId },
  );
  const { lastSeq } = await store.append(runId, [event], { expectedSeq: 'any' });
  return lastSeq;
}

describe('a call run in place', () => {
  it('runs once, records the effect, publishes the observation and sends no decide task', async () => {
    const task = toolTask('local-plain', 'test.count', { n: 4 });
    const outcome = await sys.gateway.local.run(task);

    expect(counter.runs(task.idempotencyKey)).toBe(1);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({ status: 'succeeded' });
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    expect(outcome.seq).toBe(log[0]?.event.seq);
    expect(outcome.event, 'no `after` given: nothing to fold').toBeUndefined();
    expect(await decideTasks(sys.setup.jsm, task.runId)).toEqual([]);
    const rows = await outboxRows(sys.setup.db, task.runId);
    expect(rows).toHaveLength(1);
  });

  it("given the run's last sequence, lands right behind it and returns the event as the log stores it", async () => {
    const task = toolTask('local-followed', 'test.count', { n: 5 });
    const after = await appendMarker(task.runId, 'local-followed-marker');
    const outcome = await sys.gateway.local.run(task, { after });

    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['signal_received', 'tool_call_completed']);
    const stored = await createEventStore({ js: sys.setup.js, jsm: sys.setup.jsm }).read(task.runId);
    expect(outcome.event).toEqual(stored[1]);
    expect(outcome.seq).toBe(stored[1]?.seq);
  });

  it('when the run moved on, appends behind the newer event and returns no event to fold', async () => {
    const task = toolTask('local-moved', 'test.count', { n: 6 });
    const stale = await appendMarker(task.runId, 'local-moved-1');
    await appendMarker(task.runId, 'local-moved-2');
    const outcome = await sys.gateway.local.run(task, { after: stale });

    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual([
      'signal_received',
      'signal_received',
      'tool_call_completed',
    ]);
    expect(outcome.event).toBeUndefined();
    expect(outcome.seq).toBe(log[2]?.event.seq);
    expect(counter.runs(task.idempotencyKey)).toBe(1);
  });

  it('a repeat of a finished call runs nothing and leaves the observation to the relay, which nudges', async () => {
    const task = toolTask('local-repeat', 'test.count', { n: 7 });
    await sys.gateway.local.run(task);
    const again = await sys.gateway.local.run(task);

    expect(counter.runs(task.idempotencyKey)).toBe(1);
    expect(again.seq, 'the relay publishes the repeat (the log drops it)').toBeUndefined();
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
  });

  it('a retryable failure is reported with its delay, its observation published, not thrown', async () => {
    const task = toolTask('local-retry', 'test.flaky', { n: 8 });
    const first = await sys.gateway.local.run(task);
    expect(first.retryAfterMs).toBeGreaterThanOrEqual(0);
    expect(first.seq).toBeDefined();
    const second = await sys.gateway.local.run(task);
    expect(second.retryAfterMs).toBeUndefined();
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_failed', 'tool_call_completed']);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'succeeded',
      attempts: 2,
    });
  });

  it('a call another drive is running is waited for, not failed: it runs once and both see its outcome', async () => {
    const task = toolTask('local-busy', 'test.slow', { n: 9 });
    const first = sys.gateway.local.run(task);
    // The second drive comes while the first attempt holds the key (a run driven by two workers at once).
    await eventually(
      async () => ((await effectRow(sys.setup.db, task.idempotencyKey)) ? true : undefined),
      'the first attempt claimed the key',
    );
    const second = sys.gateway.local.run(task);

    await expect(first).resolves.toMatchObject({ seq: expect.any(Number) });
    await expect(second).resolves.toBeDefined();
    expect(slow.runs(task.idempotencyKey)).toBe(1);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    });
    const log = await eventually(async () => {
      const events = await runLog(sys.setup.jsm, task.runId);
      return events.length > 0 ? events : undefined;
    }, 'the observation in the log');
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
  });

  it('takes only tools it has and that have no limit across replicas', () => {
    expect(sys.gateway.local.runs('test.count')).toBe(true);
    expect(sys.gateway.local.runs('no.such.tool')).toBe(false);
  });
});
