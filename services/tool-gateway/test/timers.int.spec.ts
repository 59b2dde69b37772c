import { describe, expect, it, vi } from 'vitest';
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import {
  DeadLetterSchema,
  STREAMS,
  SUBJECTS,
  runSubject,
  timerTaskMsgId,
  type TimerTask,
} from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { TIMER_CONSUMER, outbox, timers } from '../src/index';
import { decideTasks, eventually, publishTimer, runLog, sleep, storedMessages, timerTask } from './support';
import { useGatewayReplicas } from './gateway-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const env = useGatewayReplicas(infra, [[], []]);

/** The `timer_fired` messages on the run's log, with the time the log stored each. */
async function firings(runId: string) {
  const messages = await storedMessages(env.setup.jsm, STREAMS.runs, runSubject(runId));
  return messages
    .filter((msg) => msg.header?.get('Dura-Event-Type') === 'timer_fired')
    .map((msg) => ({ msgId: msg.header?.get('Nats-Msg-Id'), storedAt: msg.time, seq: msg.seq }));
}

async function timerConsumerIdle(): Promise<boolean> {
  const info = await env.setup.jsm.consumers.info(STREAMS.tasks, TIMER_CONSUMER.durable);
  return info.num_pending + info.num_ack_pending === 0;
}

/**
 * True once nothing more can fire on these runs' logs: every timer task was consumed and acked (no copy is
 * left to store a timer), every stored timer of the runs is marked fired (no row left for a firing pass),
 * and every observation the firings queued is marked sent (on the log; a re-send carries the same msg-id).
 */
async function settled(runIds: readonly string[]): Promise<boolean> {
  if (!(await timerConsumerIdle())) return false;
  const [open] = await env.setup.db
    .select({ n: sql<number>`count(*)::int` })
    .from(timers)
    .where(and(inArray(timers.runId, runIds), isNull(timers.firedAt)));
  const [unsent] = await env.setup.db
    .select({ n: sql<number>`count(*)::int` })
    .from(outbox)
    .where(and(inArray(outbox.runId, runIds), isNull(outbox.sentAt)));
  return open?.n === 0 && unsent?.n === 0;
}

describe('durable timers with two gateways running', () => {
  it('fire timer_fired on the run’s log at or after the due time, never before, exactly once each', async () => {
    const dueAt = new Date(Date.now() + 2_000);
    const tasks = Array.from({ length: 12 }, (_, i) =>
      timerTask(`run-timer-${i % 4}`, `wait-${i}`, new Date(dueAt.getTime() + i * 20)),
    );
    await Promise.all(tasks.map((task) => publishTimer(env.setup, task)));

    await eventually(async () => {
      const [row] = await env.setup.db.select({ n: sql<number>`count(*)::int` }).from(timers);
      return row?.n === tasks.length ? true : undefined;
    }, 'every timer stored');
    await sleep(Math.max(0, dueAt.getTime() - Date.now() - 300));
    for (const runId of new Set(tasks.map((task) => task.runId))) expect(await firings(runId)).toEqual([]);

    await eventually(async () => {
      const counts = await Promise.all(tasks.map(async (task) => (await firings(task.runId)).length));
      return counts.every((n) => n === 3) ? true : undefined;
    }, 'every timer fired');
    const runIds = [...new Set(tasks.map((task) => task.runId))];
    await eventually(async () => ((await settled(runIds)) ? true : undefined), 'nothing left to fire');

    for (const task of tasks) {
      const fired = (await firings(task.runId)).filter(
        (entry) => entry.msgId === timerTaskMsgId(task.runId, task.waitId),
      );
      expect(fired).toHaveLength(1);
      expect(fired[0]!.storedAt.getTime()).toBeGreaterThanOrEqual(new Date(task.dueAt).getTime());
    }
    const log = await runLog(env.setup.jsm, 'run-timer-1');
    expect(log.map(({ event }) => event.type)).toEqual(['timer_fired', 'timer_fired', 'timer_fired']);
    const first = log[0]!.event;
    expect(first.data).toEqual({ waitId: 'wait-1' });
    expect(first.meta).toMatchObject({
      id: timerTaskMsgId('run-timer-1', 'wait-1'),
      causationId: 'run-timer-1@wait-wait-1',
      correlationId: 'run-timer-1',
      trace: tasks[1]!.trace,
    });
    expect(new Date(first.meta.ts).getTime()).toBeGreaterThanOrEqual(new Date(tasks[1]!.dueAt).getTime());

    const decides = await decideTasks(env.setup.jsm, 'run-timer-1');
    expect(decides.map(({ task }) => task.reason)).toEqual(['timer', 'timer', 'timer']);
    expect(decides.map(({ msgId }) => msgId)).toEqual(log.map(({ event }) => `run-timer-1@${event.seq}`));

    const rows = await env.setup.db.select().from(timers);
    expect(rows.every((row) => row.firedAt !== null && row.firedAt >= row.dueAt)).toBe(true);
    const [queued] = await env.setup.db
      .select({ n: sql<number>`count(*)::int` })
      .from(outbox)
      .where(sql`${outbox.msgId} like 'timer:run-timer-%'`);
    expect(queued?.n).toBe(tasks.length);
  });

  it('store a repeated timer task once and fire it once', async () => {
    const task = timerTask('run-timer-dup', 'wait-dup', new Date(Date.now() + 2_000));
    const msgId = timerTaskMsgId(task.runId, task.waitId);
    // Different msg-ids, so JetStream keeps every copy; the two gateways may handle both at the same time.
    await Promise.all([publishTimer(env.setup, task), publishTimer(env.setup, task, `${msgId}#again`)]);
    await eventually(async () => {
      const stored = await env.setup.db.select().from(timers).where(eq(timers.runId, task.runId));
      return stored.length > 0 ? true : undefined;
    }, 'the timer stored');

    // A repeat with another due time does not move the stored timer. It goes out once the timer is stored:
    // of two copies in flight at once, which one a gateway stores first is up to the gateways.
    const later: TimerTask = { ...task, dueAt: new Date(Date.now() + 60_000).toISOString() };
    await publishTimer(env.setup, later, `${msgId}#later`);

    await eventually(
      async () =>
        (await firings(task.runId)).length > 0 && (await settled([task.runId])) ? true : undefined,
      'the timer fired and nothing is left to fire',
    );
    expect(await firings(task.runId)).toHaveLength(1);
    const rows = await env.setup.db.select().from(timers).where(eq(timers.runId, task.runId));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.dueAt.toISOString()).toBe(task.dueAt);
    const queued = await env.setup.db.select().from(outbox).where(eq(outbox.runId, task.runId));
    expect(queued.map((row) => row.msgId)).toEqual([msgId]);
  });

  it('dead-letter an invalid timer task with the reason and keep consuming', async () => {
    const invalid = { ...timerTask('run-timer-bad', 'wait-bad', new Date()), dueAt: 'tomorrow at noon' };
    await env.setup.js.publish(SUBJECTS.timerTask, JSON.stringify(invalid), { msgID: 'bad-timer-1' });
    await env.setup.js.publish(SUBJECTS.timerTask, 'not json at all', { msgID: 'bad-timer-2' });
    const valid = timerTask('run-timer-after-bad', 'wait-ok', new Date(Date.now() + 200));
    await publishTimer(env.setup, valid);

    const letters = await eventually(async () => {
      const found = await storedMessages(env.setup.jsm, STREAMS.deadLetters, 'dura.dlq.timer-tasks');
      return found.length >= 2 ? found.map((msg) => DeadLetterSchema.parse(msg.json())) : undefined;
    }, 'two dead letters');
    expect(letters).toHaveLength(2);
    // Two gateways take the tasks, so the letters may be stored in either order.
    const notJson = letters.find((letter) => letter.payload === 'not json at all');
    const badDue = letters.find((letter) => letter !== notJson);
    expect(badDue).toMatchObject({
      source: 'timer-tasks',
      subject: SUBJECTS.timerTask,
      runId: 'run-timer-bad',
      error: { code: 'contract_violation', message: expect.stringContaining('timer task does not match') },
    });
    expect(badDue!.issues?.some((issue) => issue.startsWith('dueAt'))).toBe(true);
    expect(JSON.parse(badDue!.payload)).toEqual(invalid);
    expect(notJson).toMatchObject({
      error: { code: 'contract_violation', message: expect.stringContaining('timer task is not valid JSON') },
      payload: 'not json at all',
    });

    await eventually(
      async () => ((await firings(valid.runId)).length === 1 ? true : undefined),
      'the valid timer after the invalid ones fired',
    );
    await eventually(async () => ((await timerConsumerIdle()) ? true : undefined), 'the timer consumer idle');
    const bad = await env.setup.db.select().from(timers).where(eq(timers.runId, 'run-timer-bad'));
    expect(bad).toEqual([]);
  });
});
