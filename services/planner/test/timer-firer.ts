// The gateway's durable timers as planner tests without a gateway need them: timer tasks are taken from
// `dura.task.timer` and fired as the gateway fires them (services/tool-gateway/src/timer-store.ts): at their
// due time, or at once when woken (`TimerTask.wake`), each (run, wait) once, never again after it fired.
// Firing appends `timer_fired` under the task's msg-id and nudges the planner, as the gateway's relay does.
import {
  newEvent,
  runSubject,
  STREAMS,
  SUBJECTS,
  TASK_VERSION,
  TimerTaskSchema,
  timerTaskMsgId,
  type DecideTask,
  type TimerTask,
} from '@dura/contracts';
import { ensureDurableConsumer, startConsumerLoop } from '@dura/service-kit';
import { testLogger, type Connections } from './support';

export interface TimerFirer {
  /** Waits run by run: `runId:waitId` of every timer fired so far. */
  readonly fired: ReadonlySet<string>;
  stop(): Promise<void>;
}

export async function startTimerFirer(conn: Connections): Promise<TimerFirer> {
  const spec = {
    stream: STREAMS.tasks,
    durable: 'test-timers',
    filterSubject: SUBJECTS.timerTask,
    maxDeliver: 5,
    ackWaitMs: 30_000,
  };
  await ensureDurableConsumer(conn.jsm, spec);
  const fired = new Set<string>();
  const pending = new Map<string, NodeJS.Timeout>();

  async function fire(task: TimerTask): Promise<void> {
    const { runId, waitId } = task;
    const id = `${runId}:${waitId}`;
    if (fired.has(id)) return;
    fired.add(id);
    pending.delete(id);
    const event = newEvent(
      'timer_fired',
      { waitId },
      {
        id: timerTaskMsgId(runId, waitId),
        runId,
        ts: new Date().toISOString(),
        causationId: task.causationId,
        correlationId: task.correlationId,
      },
    );
    const ack = await conn.js.publish(runSubject(runId), JSON.stringify(event), {
      msgID: timerTaskMsgId(runId, waitId),
    });
    const nudge: DecideTask = { v: TASK_VERSION, runId, afterSeq: ack.seq, reason: 'timer' };
    await conn.js.publish(SUBJECTS.decideTask, JSON.stringify(nudge), { msgID: `${runId}@${ack.seq}` });
  }

  const loop = startConsumerLoop({
    js: conn.js,
    spec,
    source: 'test-timers',
    concurrency: 4,
    log: testLogger('test-timers'),
    handle: (msg) => {
      const task = TimerTaskSchema.parse(JSON.parse(new TextDecoder().decode(msg.data)));
      const id = `${task.runId}:${task.waitId}`;
      if (fired.has(id)) return Promise.resolve();
      const inMs = task.wake ? 0 : Math.max(0, Date.parse(task.dueAt) - Date.now());
      // A wake moves a pending timer to now; a repeat of a stored task changes nothing.
      if (pending.has(id) && !task.wake) return Promise.resolve();
      clearTimeout(pending.get(id));
      pending.set(
        id,
        setTimeout(() => void fire(task).catch(() => fired.delete(id)), inMs),
      );
      return Promise.resolve();
    },
  });

  return {
    fired,
    async stop() {
      for (const timer of pending.values()) clearTimeout(timer);
      await loop.stop();
    },
  };
}
