// Direct calls: a planner hands a call straight to a gateway (request/reply on dura.call.<tool>), which runs it
// as a worker runs a call in place and answers with where its observation landed. Asked here as a planner asks.
import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { headers as natsHeaders } from '@nats-io/nats-core';
import {
  DIRECT_CALL_HEADERS,
  directCallReplyOf,
  directCallSubject,
  type DirectCallReply,
  type ToolTask,
} from '@dura/contracts';
import { decodeStored } from '@dura/event-store';
import { defineTool } from '@dura/tools';
import { useTestInfra } from '@dura/testing';
import { countingTool, effectRow, outboxRows, runLog, toolTask, type Connections } from './support';
import { useGateway } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();

const lookup = defineTool({
  name: 'test.lookup',
  description: 'a read-only test tool',
  input: z.object({ n: z.number().int() }),
  safety: 'read_only',
  timeoutMs: 10_000,
  execute: ({ n }) => Promise.resolve({ n }),
});
const slow = defineTool({
  name: 'test.slow',
  description: 'a read-only tool that takes a while',
  input: z.object({ ms: z.number().int() }),
  safety: 'read_only',
  timeoutMs: 10_000,
  execute: async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { slept: ms };
  },
});
const limited = countingTool('test.limited', { safety: 'idempotent' });
limited.tool.concurrency = 1;
const writer = countingTool('test.write', { safety: 'idempotent' });
const sys = useGateway(infra, [lookup, slow, limited.tool, writer.tool]);

/** Every reply to one direct call, until its outcome (or 5 s of silence). */
async function ask(
  conn: Connections,
  task: ToolTask,
  options: { after?: number; afterHeader?: string; fresh?: boolean; subject?: string; body?: string } = {},
): Promise<DirectCallReply[]> {
  const headers = natsHeaders();
  const after = options.afterHeader ?? (options.after === undefined ? undefined : String(options.after));
  if (after !== undefined) headers.set(DIRECT_CALL_HEADERS.after, after);
  if (options.fresh) headers.set(DIRECT_CALL_HEADERS.fresh, 'true');
  const replies = await conn.nc.requestMany(
    options.subject ?? directCallSubject(task.tool),
    options.body ?? JSON.stringify(task),
    { strategy: 'stall', maxWait: 5_000, stall: 5_000, headers },
  );
  const seen: DirectCallReply[] = [];
  for await (const msg of replies) {
    const read = directCallReplyOf((name) => msg.headers?.get(name) || undefined, msg.data);
    if (!read.ok) throw new Error(read.problem);
    seen.push(read.reply);
    if (read.reply.kind !== 'working') break;
  }
  return seen;
}

describe('a direct call', () => {
  it('of a read-only tool, fresh, behind the run’s last sequence: answered with the observation as the log stored it, nothing in Postgres', async () => {
    const task = toolTask('direct-ro', 'test.lookup', { n: 1 });
    const replies = await ask(sys.setup, task, { after: 0, fresh: true });

    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => [e.event.type, e.msgId])).toEqual([
      ['tool_call_completed', `${task.idempotencyKey}:result`],
    ]);
    const done = replies.at(-1);
    expect(done).toMatchObject({ kind: 'done', seq: log[0]?.event.seq });
    if (done?.kind !== 'done' || !done.observation || done.seq === undefined)
      throw new Error('no observation');
    expect(decodeStored({ seq: done.seq, data: done.observation })).toEqual(log[0]?.event);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toBeUndefined();
    expect(await outboxRows(sys.setup.db, task.runId)).toEqual([]);
  });

  it('of an idempotent tool: claimed and recorded in the ledger as a tool task’s would be, run once when asked twice', async () => {
    const task = toolTask('direct-write', 'test.write', { n: 2 });
    const first = await ask(sys.setup, task, { fresh: true });
    const again = await ask(sys.setup, task);

    expect(writer.runs(task.idempotencyKey)).toBe(1);
    expect(await effectRow(sys.setup.db, task.idempotencyKey)).toMatchObject({ status: 'succeeded' });
    const log = await runLog(sys.setup.jsm, task.runId);
    expect(log.map((e) => e.event.type)).toEqual(['tool_call_completed']);
    expect(first.at(-1)).toMatchObject({ kind: 'done', seq: log[0]?.event.seq });
    expect(again.at(-1)).toMatchObject({ kind: 'done' });
  });

  it('that runs for a while: the gateway says it is working, about every second, before the outcome', async () => {
    const task = toolTask('direct-slow', 'test.slow', { ms: 2_600 });
    const replies = await ask(sys.setup, task, { fresh: true });

    expect(replies.filter((r) => r.kind === 'working').length).toBeGreaterThanOrEqual(2);
    expect(replies.at(-1)).toMatchObject({ kind: 'done' });
  });

  it('of a tool limited across replicas, or unknown here: declined, and nothing runs', async () => {
    const task = toolTask('direct-limited', 'test.limited', { n: 3 });
    expect(await ask(sys.setup, task)).toEqual([
      { kind: 'declined', reason: expect.stringContaining('test.limited') },
    ]);
    const unknown = toolTask('direct-unknown', 'test.nowhere', { n: 4 });
    expect(await ask(sys.setup, unknown)).toEqual([
      { kind: 'declined', reason: expect.stringContaining('test.nowhere') },
    ]);
    expect(limited.runs(task.idempotencyKey)).toBe(0);
    expect(await runLog(sys.setup.jsm, task.runId)).toEqual([]);
  });

  it('sent on another tool’s subject, not a tool task, or with a malformed header: failed with the reason, and nothing runs', async () => {
    const task = toolTask('direct-malformed', 'test.write', { n: 5 });
    expect(await ask(sys.setup, task, { subject: directCallSubject('test.lookup') })).toEqual([
      { kind: 'failed', reason: expect.stringContaining('was sent on dura.call.test.lookup') },
    ]);
    expect(await ask(sys.setup, task, { body: '{"not":"a task"}' })).toEqual([
      { kind: 'failed', reason: expect.stringContaining('direct call') },
    ]);
    expect(await ask(sys.setup, task, { afterHeader: 'soon' })).toEqual([
      { kind: 'failed', reason: expect.stringContaining('after') },
    ]);
    expect(writer.runs(task.idempotencyKey)).toBe(0);
    expect(await runLog(sys.setup.jsm, task.runId)).toEqual([]);
  });
});
