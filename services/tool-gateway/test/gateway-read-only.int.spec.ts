// Read-only tools: a call nobody can have started yet (a drive's own new intent, a task's first delivery)
// runs without a claim. Run in place, its result goes to the log alone (no ledger row, no outbox row), unless
// that publish fails; from a task, its row goes in with its result. A key that has a row keeps its verdict.
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { defineTool, ToolError } from '@dura/tools';
import { retryUntil, useTestInfra } from '@dura/testing';
import type { EffectRow } from '../src/index';
import { countingTool, effectRow, outboxRows, publishTask, runLog, toolTask } from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();

/** The key's ledger row as each execution found it when it began, and what each execution returned. */
const seen = new Map<string, (EffectRow | undefined)[]>();
const lookup = defineTool({
  name: 'test.lookup',
  description: 'a read-only test tool that records the ledger row of its key as it starts',
  input: z.object({ n: z.number().int(), failFirst: z.boolean().optional() }),
  safety: 'read_only',
  timeoutMs: 10_000,
  async execute({ n, failFirst }, ctx) {
    const rows = seen.get(ctx.idempotencyKey) ?? [];
    rows.push(await effectRow(sys.setup.db, ctx.idempotencyKey));
    seen.set(ctx.idempotencyKey, rows);
    if (failFirst && rows.length === 1) throw new ToolError('busy', 'try again', { retryable: true });
    return { n, execution: rows.length, attempt: ctx.attempt };
  },
});
const writer = countingTool('test.write', { safety: 'idempotent' });
const sys = useGateway(infra, [lookup, writer.tool]);

describe('a read-only call', () => {
  it('run fresh in place: runs before its key has a row, and its result goes to the log alone', async () => {
    const task = toolTask('ro-fresh', 'test.lookup', { n: 1 });
    const outcome = await sys.gateway.local.run(task, { fresh: true });

    expect(seen.get(task.idempotencyKey)).toEqual([undefined]);
    expect(await effectRow(sys.setup.db, task.idempotencyKey), 'no ledger row').toBeUndefined();
    expect(await outboxRows(sys.setup.db, task.runId), 'no outbox row').toEqual([]);
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    expect(log[0]?.msgId).toBe(`${task.idempotencyKey}:result`);
    expect(log[0]?.event.data).toMatchObject({ result: { n: 1, execution: 1, attempt: 1 }, attempt: 1 });
    expect(outcome.seq).toBe(log[0]?.event.seq);
  });

  it('run in place behind the run’s last sequence (none yet): the observation lands there and comes back as stored', async () => {
    const task = toolTask('ro-fresh-after', 'test.lookup', { n: 11 });
    const outcome = await sys.gateway.local.run(task, { fresh: true, after: 0 });

    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log).toHaveLength(1);
    const seq = log[0]?.event.seq;
    expect(outcome).toMatchObject({ seq, event: { type: 'tool_call_completed', seq } });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toBeUndefined();
  });

  it('run again fresh after its result was logged: the first result stands, and it is logged once', async () => {
    const task = toolTask('ro-again', 'test.lookup', { n: 2 });
    const first = await sys.gateway.local.run(task, { fresh: true });
    const again = await sys.gateway.local.run(task, { fresh: true });

    expect(seen.get(task.idempotencyKey)).toHaveLength(2);
    expect(again.seq, 'the second publish is the first one’s duplicate').toBe(first.seq);
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    expect(log[0]?.event.data).toMatchObject({ result: { execution: 1 } });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toBeUndefined();
  });

  it('run fresh after another attempt recorded its result: that row’s verdict stands', async () => {
    const task = toolTask('ro-conflict', 'test.lookup', { n: 12 });
    await sys.gateway.local.run(task);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({ status: 'succeeded' });
    const again = await sys.gateway.local.run(task, { fresh: true });

    expect(seen.get(task.idempotencyKey)).toHaveLength(2);
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    expect(log[0]?.event.data).toMatchObject({ result: { execution: 1 } });
    expect(again.seq).toBe(log[0]?.event.seq);
  });

  it('run fresh twice at once: one observation logged', async () => {
    const task = toolTask('ro-race', 'test.lookup', { n: 3 });
    const outcomes = await Promise.all([
      sys.gateway.local.run(task, { fresh: true }),
      sys.gateway.local.run(task, { fresh: true }),
    ]);

    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    expect(outcomes.map((o) => o.seq)).toEqual([log[0]?.event.seq, log[0]?.event.seq]);
  });

  it('run fresh while NATS is down: the result is recorded with its outbox row, and the relay logs it once NATS is back', async () => {
    const task = toolTask('ro-offline', 'test.lookup', { n: 13 });
    await infra().nats.kill();
    let outcome: Awaited<ReturnType<typeof sys.gateway.local.run>>;
    try {
      outcome = await sys.gateway.local.run(task, { fresh: true });
    } finally {
      await infra().nats.restart();
    }
    expect(outcome.seq, 'not published by the call').toBeUndefined();
    expect(seen.get(task.idempotencyKey), 'ran once').toHaveLength(1);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      result: { n: 13, execution: 1 },
    });
    const log = await retryUntil(async () => {
      const logged = await runLog(sys.setup.jsm, task.runId);
      expect(logged.map((e) => e.event.type)).toEqual(['tool_call_completed']);
      return logged;
    }, 60_000);
    expect(log[0]?.event.data).toMatchObject({ result: { n: 13, execution: 1 } });
  });

  it('a retryable failure leaves a retry row; the next attempt claims it as attempt 2', async () => {
    const task = toolTask('ro-retry', 'test.lookup', { n: 4, failFirst: true });
    const first = await sys.gateway.local.run(task, { fresh: true });
    expect(first.retryAfterMs).toBeGreaterThanOrEqual(0);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'retry',
      attempts: 1,
    });

    await sys.gateway.local.run(task);
    const rows = seen.get(task.idempotencyKey) ?? [];
    expect(rows[1], 'the second attempt ran under its claim').toMatchObject({
      status: 'started',
      attempts: 2,
    });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      result: { execution: 2, attempt: 2 },
    });
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_failed', 'tool_call_completed']);
  });

  it('run in place but not fresh (a drive resuming a recorded intent): runs under a claim', async () => {
    const task = toolTask('ro-resumed', 'test.lookup', { n: 5 });
    await sys.gateway.local.run(task);
    expect(seen.get(task.idempotencyKey)?.[0]).toMatchObject({ status: 'started', attempts: 1 });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({ status: 'succeeded' });
  });

  it('from a tool task on its first delivery: runs without a claim, its row going in with its result', async () => {
    const task = toolTask('ro-task', 'test.lookup', { n: 6 });
    await publishTask(sys.setup, task);
    await retryUntil(async () => {
      expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        result: { n: 6, execution: 1, attempt: 1 },
      });
    });
    expect(seen.get(task.idempotencyKey)).toEqual([undefined]);
    await retryUntil(async () => {
      const log = await runLog(sys.setup.jsm, task.runId);
      expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    });
  });

  it('a tool task repeating a call that finished long ago: the first result stands, no second observation', async () => {
    const task = toolTask('ro-task-repeat', 'test.lookup', { n: 8 });
    await publishTask(sys.setup, task);
    await retryUntil(async () => {
      const log = await runLog(sys.setup.jsm, task.runId);
      expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    });
    const firstSent = await retryUntil(async () => {
      const [row] = await outboxRows(sys.setup.db, task.runId);
      expect(row?.sentAt).toBeInstanceOf(Date);
      return row?.sentAt?.getTime();
    });
    // A new message for the same call (past the stream's duplicate window): a first delivery again.
    await publishTask(sys.setup, task, `${task.idempotencyKey}-again`);
    await retryUntil(async () => {
      expect(seen.get(task.idempotencyKey), 'the repeat ran').toHaveLength(2);
      // The repeat answered from the ledger: the recorded observation queued again, and sent again.
      const rows = await outboxRows(sys.setup.db, task.runId);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.sentAt?.getTime()).toBeGreaterThan(firstSent ?? Infinity);
    });
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      result: { execution: 1 },
    });
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    expect(log[0]?.event.data).toMatchObject({ result: { execution: 1 } });
  });

  it('a tool task that failed retryably: its redelivery runs under a claim as attempt 2', async () => {
    const task = toolTask('ro-task-retry', 'test.lookup', { n: 9, failFirst: true });
    await publishTask(sys.setup, task);
    await retryUntil(async () => {
      expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({
        status: 'succeeded',
        attempts: 2,
        result: { execution: 2, attempt: 2 },
      });
    }, 20_000);
    const rows = seen.get(task.idempotencyKey) ?? [];
    expect(rows[0], 'the first delivery ran unclaimed').toBeUndefined();
    expect(rows[1], 'the redelivery ran under its claim').toMatchObject({ status: 'started', attempts: 2 });
  });
});

describe('an idempotent call', () => {
  it('run fresh in place still runs under a claim', async () => {
    const task = toolTask('idem-fresh', 'test.write', { n: 7 });
    await sys.gateway.local.run(task, { fresh: true });
    expect(writer.runs(task.idempotencyKey)).toBe(1);
    const row = await effectRow(sys.setup.db, task.idempotencyKey);
    expect(row).toMatchObject({ status: 'succeeded', attempts: 1 });
    // The claim's lease is the tool's timeout plus the margin; an unclaimed row's lease is its start.
    expect(row && row.leaseUntil.getTime() - row.startedAt.getTime()).toBeGreaterThanOrEqual(10_000);
  });
});
