import { describe, expect, it, vi } from 'vitest';
import { useTestInfra } from '@dura/testing';
import { createEffectLedger } from '../src/effect-ledger';
import { completedEvent } from '../src/observations';
import { createRelay } from '../src/index';
import { decideTasks, effectRow, outboxRows, runLog, testLogger, toolTask } from './support';
import { useConnections } from './gateway-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const env = useConnections(infra);

const clock = () => new Date();

describe('finish and the fast path', () => {
  it('does not count a row the process published and has not marked yet as ahead (`inLog`)', async () => {
    let inLog: number[] = [];
    const ledger = createEffectLedger(env.setup.db, clock, { inLog: () => inLog });
    const first = toolTask('fast-in-log', 'echo', { n: 1 }, 1);
    const second = toolTask('fast-in-log', 'echo', { n: 2 }, 2);
    for (const task of [first, second]) expect((await ledger.claim(task, 60_000)).kind).toBe('claimed');
    const one = await ledger.finish(
      first.idempotencyKey,
      { status: 'succeeded', result: { n: 1 } },
      completedEvent(first, { n: 1 }, 1, 1, clock()),
      1,
      1,
    );
    expect(one.ahead).toBe(false);
    // The first row is unsent: without `inLog` it is ahead of the second; published (in the log), it is not.
    inLog = [one.queued!.id];
    const two = await ledger.finish(
      second.idempotencyKey,
      { status: 'succeeded', result: { n: 2 } },
      completedEvent(second, { n: 2 }, 1, 1, clock()),
      1,
      1,
    );
    expect(two.ahead).toBe(false);
    expect(two.queued).toBeDefined();

    const third = toolTask('fast-in-log', 'echo', { n: 3 }, 3);
    expect((await ledger.claim(third, 60_000)).kind).toBe('claimed');
    inLog = [one.queued!.id];
    const three = await ledger.finish(
      third.idempotencyKey,
      { status: 'succeeded', result: { n: 3 } },
      completedEvent(third, { n: 3 }, 1, 1, clock()),
      1,
      1,
    );
    expect(three.ahead, 'the second row is unsent and not known to be in the log').toBe(true);
  });

  it('records the outcome and queues the observation in one statement, and says nothing is ahead', async () => {
    const ledger = createEffectLedger(env.setup.db, clock);
    const task = toolTask('fast-1', 'echo', { n: 1 });
    expect((await ledger.claim(task, 60_000)).kind).toBe('claimed');
    const observation = completedEvent(task, { n: 1 }, 1, 3, clock());
    const finished = await ledger.finish(
      task.idempotencyKey,
      { status: 'succeeded', result: { n: 1 } },
      observation,
      3,
      1,
    );
    expect(finished.ahead).toBe(false);
    expect(finished.queued).toMatchObject({
      runId: 'fast-1',
      msgId: observation.meta.id,
      payload: observation,
    });
    const row = await effectRow(env.setup.db, task.idempotencyKey);
    expect(row).toMatchObject({ status: 'succeeded', result: { n: 1 }, error: null, durationMs: 3 });
    expect(row?.finishedAt).toBeInstanceOf(Date);
    const queued = await outboxRows(env.setup.db, 'fast-1');
    expect(queued.map((r) => [r.id, r.msgId, r.sentAt])).toEqual([
      [finished.queued!.id, observation.meta.id, null],
    ]);

    // The same observation again (a repeat of the finish) queues nothing new.
    const again = await ledger.finish(
      task.idempotencyKey,
      { status: 'succeeded', result: { n: 1 } },
      observation,
      3,
      1,
    );
    expect(again.queued).toBeUndefined();
    expect(await outboxRows(env.setup.db, 'fast-1')).toHaveLength(1);
  });

  it('says a row is ahead when the run already has an unsent observation, and records a failure', async () => {
    const ledger = createEffectLedger(env.setup.db, clock);
    const first = toolTask('fast-2', 'echo', { n: 1 }, 1);
    const second = toolTask('fast-2', 'echo', { n: 2 }, 2);
    for (const task of [first, second]) await ledger.claim(task, 60_000);
    const one = await ledger.finish(
      first.idempotencyKey,
      { status: 'succeeded', result: 1 },
      completedEvent(first, 1, 1, 0, clock()),
      0,
      1,
    );
    expect(one.ahead).toBe(false);
    const error = { code: 'boom', message: 'no' };
    const two = await ledger.finish(
      second.idempotencyKey,
      { status: 'failed', error },
      completedEvent(second, 2, 1, 0, clock()),
      0,
      1,
    );
    expect(two.queued).toBeDefined();
    expect(two.ahead).toBe(true);
    expect(await effectRow(env.setup.db, second.idempotencyKey)).toMatchObject({
      status: 'failed',
      error,
      result: null,
    });
  });

  it('records finishes that arrive together in one batch; a row behind another of its run has one ahead', async () => {
    const ledger = createEffectLedger(env.setup.db, clock);
    const tasks = [
      toolTask('fast-4b', 'echo', { n: 1 }, 1),
      toolTask('fast-4a', 'echo', { n: 1 }, 1),
      toolTask('fast-4a', 'echo', { n: 2 }, 2),
      toolTask('fast-4c', 'echo', { n: 1 }, 1),
    ];
    for (const task of tasks) await ledger.claim(task, 60_000);
    const finished = await Promise.all(
      tasks.map((task, i) =>
        ledger.finish(
          task.idempotencyKey,
          { status: 'succeeded', result: i },
          completedEvent(task, i, 1, 0, clock()),
          i,
          1,
        ),
      ),
    );
    expect(finished.map((f) => [f.queued?.runId, f.ahead])).toEqual([
      ['fast-4b', false],
      ['fast-4a', false],
      ['fast-4a', true],
      ['fast-4c', false],
    ]);
    for (const [i, task] of tasks.entries())
      expect(await effectRow(env.setup.db, task.idempotencyKey)).toMatchObject({
        status: 'succeeded',
        result: i,
        durationMs: i,
      });
    // Within a run, outbox ids keep the order the finishes came in.
    const queued = await outboxRows(env.setup.db, 'fast-4a');
    expect(queued.map((row) => row.msgId)).toEqual(
      tasks.slice(1, 3).map((task) => `${task.idempotencyKey}:result`),
    );
  });

  it('claims keys that arrive together in one batch; of one key claimed twice at once, one claim wins', async () => {
    const ledger = createEffectLedger(env.setup.db, clock);
    const [first, second] = [toolTask('claims-1', 'echo', { n: 1 }), toolTask('claims-2', 'echo', { n: 2 })];
    for (const durable of [true, false]) {
      const keyed = (task: typeof first) => ({
        ...task,
        idempotencyKey: `${task.idempotencyKey}:${durable}`,
      });
      const claims = await Promise.all(
        [first, second, second, first].map((task) => ledger.claim(keyed(task), 60_000, { durable })),
      );
      expect(claims.map((claim) => claim.kind)).toEqual(['claimed', 'claimed', 'busy', 'busy']);
      for (const task of [first, second])
        expect(await effectRow(env.setup.db, keyed(task).idempotencyKey)).toMatchObject({
          status: 'started',
          attempts: 1,
          args: task.args,
        });
    }
  });

  it('sendNow publishes the observation and its decide task and marks the row sent, without a relay pass', async () => {
    const ledger = createEffectLedger(env.setup.db, clock);
    const relay = createRelay({ db: env.setup.db, js: env.setup.js, log: testLogger('fast-relay') });
    const task = toolTask('fast-3', 'echo', { n: 3 });
    await ledger.claim(task, 60_000);
    const observation = completedEvent(task, { n: 3 }, 1, 0, clock());
    const finished = await ledger.finish(
      task.idempotencyKey,
      { status: 'succeeded', result: { n: 3 } },
      observation,
      0,
      1,
    );
    await relay.sendNow(finished.queued!);
    await relay.marked();
    const log = await runLog(env.setup.jsm, 'fast-3');
    expect(log.map((e) => e.msgId)).toEqual([observation.meta.id]);
    const tasks = await decideTasks(env.setup.jsm, 'fast-3');
    expect(tasks.map((t) => t.task.afterSeq)).toEqual([log[0]!.event.seq]);
    const [row] = await outboxRows(env.setup.db, 'fast-3');
    expect(row?.sentAt).toBeInstanceOf(Date);

    // A relay pass that raced it would publish the same row again: the log keeps one copy.
    await relay.sendNow(finished.queued!);
    expect(await runLog(env.setup.jsm, 'fast-3')).toHaveLength(1);
    await relay.stop();
  });
});
