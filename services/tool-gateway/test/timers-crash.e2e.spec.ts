import { describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { STREAMS, runSubject } from '@dura/contracts';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { TIMER_CONSUMER, timers } from '../src/index';
import { eventually, publishTimer, sleep, storedMessages, timerTask } from './support';
import { useConnections, useGatewayProcesses } from './gateway-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const env = useConnections(infra);
const start = useGatewayProcesses(infra);

const POLL_MS = 60_000;

function startGateway(name: string): Promise<ManagedProcess> {
  return start(
    name,
    {
      METRICS_PORT: undefined,
      DURA_FAILPOINT: undefined,
      // A poll far apart from "at once": a timer fired at start-up cannot be mistaken for one fired at a poll.
      GATEWAY_TIMER_POLL_MS: String(POLL_MS),
    },
    30_000,
  );
}

async function firings(runId: string) {
  const messages = await storedMessages(env.setup.jsm, STREAMS.runs, runSubject(runId));
  return messages.filter((msg) => msg.header?.get('Dura-Event-Type') === 'timer_fired');
}

describe('a timer whose gateway was SIGKILLed', () => {
  it('fires exactly once, right after a new gateway process starts, when it came due while none ran', async () => {
    const first = await startGateway('gateway-1');
    const task = timerTask('run-timer-crash', 'wait-crash', new Date(Date.now() + 3_000));
    await publishTimer(env.setup, task);
    await eventually(async () => {
      const [row] = await env.setup.db.select().from(timers).where(eq(timers.runId, task.runId));
      const info = await env.setup.jsm.consumers.info(STREAMS.tasks, TIMER_CONSUMER.durable);
      return row && info.num_pending + info.num_ack_pending === 0 ? row : undefined;
    }, 'the timer stored and its task acknowledged');

    await first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await sleep(Math.max(0, new Date(task.dueAt).getTime() - Date.now()) + 1_500);
    expect(await firings(task.runId)).toEqual([]);
    const [pending] = await env.setup.db.select().from(timers).where(eq(timers.runId, task.runId));
    expect(pending?.firedAt).toBeNull();

    await startGateway('gateway-2');
    // The firing loop starts before the gateway says it started: a due timer fires at once, not at a poll
    // (POLL_MS apart; half of it leaves room for a machine many times slower than usual).
    const up = Date.now();
    await eventually(async () => ((await firings(task.runId)).length > 0 ? true : undefined), 'timer_fired');
    expect(Date.now() - up).toBeLessThan(POLL_MS / 2);

    await sleep(2_000);
    const fired = await firings(task.runId);
    expect(fired).toHaveLength(1);
    expect(fired[0]!.header?.get('Nats-Msg-Id')).toBe(`timer:${task.runId}:${task.waitId}`);
    expect(fired[0]!.time.getTime()).toBeGreaterThan(new Date(task.dueAt).getTime());
    const [row] = await env.setup.db.select().from(timers).where(eq(timers.runId, task.runId));
    expect(row?.firedAt).not.toBeNull();
  });
});
