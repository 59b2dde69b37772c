// Event triggers on real planner processes: 100 messages, some delivered again (a planner SIGKILLed between
// publishing a run request and acknowledging its message, and messages republished under their ids after the
// duplicate window), start 100 runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient, type DuraClient } from '@dura/client';
import { STREAMS } from '@dura/contracts';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { eventually, openSystem, startService, type SystemHandles } from './system';

const infra = useTestInfra();
let system: SystemHandles;
let client: DuraClient;
let planners: ManagedProcess[] = [];

// A 1 s duplicate window: a message republished later is stored again, so only the run id derived from its
// Nats-Msg-Id keeps it to one run. A 5 s ack wait: a killed planner's messages come back quickly.
const plannerEnv = () => ({
  ...system.env,
  PLANNER_ACK_WAIT_MS: '5000',
  DURA_DUPLICATE_WINDOW_MS: '1000',
  PLANNER_TENANT_AGENTS: 'acme=-,*=*',
});

beforeAll(async () => {
  system = await openSystem(infra().nats.url, infra().db.url);
  client = createDuraClient(system);
  // This planner dies (SIGKILL) right after its 3rd run request is published, before it acknowledges the
  // message; a second planner then takes over and gets that message again.
  planners = [
    await startService('planner', { ...plannerEnv(), DURA_FAILPOINT: 'planner.trigger-after-submit:3' }),
  ];
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(planners.map((p) => p.kill('SIGTERM')));
  await system?.close();
});

async function runIds(prefix: string): Promise<string[]> {
  const info = await system.jsm.streams.info(STREAMS.runs, { subjects_filter: 'dura.run.*' });
  return Object.keys(info.state.subjects ?? {})
    .map((subject) => subject.slice('dura.run.'.length))
    .filter((runId) => runId.startsWith(prefix))
    .sort();
}

async function boundOnEveryPlanner(id: string): Promise<void> {
  await Promise.all(planners.map((p) => p.waitForOutput(new RegExp(`event trigger bound.*${id}`), 30_000)));
}

describe('an event trigger', () => {
  it('turns 100 messages, some delivered twice, into exactly 100 runs of its tenant', async () => {
    await client.eventTriggers.create({
      id: 'orders',
      tenant: 'acme',
      subject: 'dura.event.orders.>',
      request: { v: 1, agent: { kind: 'scripted', steps: [] }, tags: ['order'] },
    });
    await boundOnEveryPlanner('orders');

    const publish = (i: number) =>
      system.js.publish(`dura.event.orders.created`, JSON.stringify({ order: i }), { msgID: `order-${i}` });
    for (let i = 0; i < 50; i += 1) await publish(i);
    // Not the trigger's subject: starts nothing.
    for (let i = 0; i < 5; i += 1)
      await system.js.publish('dura.event.invoices.created', JSON.stringify({ i }));
    const killed = await Promise.race([
      planners[0]?.exited,
      new Promise((resolve) => setTimeout(resolve, 60_000, 'the failpoint was not reached')),
    ]);
    expect(killed).toMatchObject({ signal: 'SIGKILL' });
    planners = [await startService('planner', plannerEnv())];
    await boundOnEveryPlanner('orders');
    for (let i = 50; i < 100; i += 1) await publish(i);
    // The same messages again once the duplicate window has passed: stored again, delivered again.
    let redelivered = 0;
    await eventually(
      async () => {
        for (let i = 0; i < 30; i += 1) if (!(await publish(i)).duplicate) redelivered += 1;
        return redelivered >= 30 ? true : undefined;
      },
      'messages republished past the duplicate window',
      30_000,
    );

    const handled = await eventually(
      async () => {
        const info = await system.jsm.consumers.info(STREAMS.events, 'trigger-orders');
        return info.num_pending === 0 && info.num_ack_pending === 0 ? info : undefined;
      },
      'every message of the trigger handled',
      90_000,
    );
    // Deliveries (the consumer's sequence) beyond the 130 messages stored on the subject are redeliveries.
    const consumerRedeliveries = handled.delivered.consumer_seq - (100 + redelivered);
    expect(consumerRedeliveries).toBeGreaterThanOrEqual(1);
    if (process.env['DURA_TEST_VERBOSE'] === '1')
      process.stderr.write(
        `[event-triggers] ${handled.delivered.consumer_seq} deliveries of ${100 + redelivered} messages: ${consumerRedeliveries} redelivered by the consumer, ${redelivered} republished\n`,
      );
    const ids = await eventually(
      async () => {
        const found = await runIds('trg-orders-');
        return found.length >= 100 ? found : undefined;
      },
      '100 runs',
      60_000,
    );
    expect(ids).toEqual(Array.from({ length: 100 }, (_, i) => `trg-orders-order-${i}`).sort());
    expect(await runIds('trg-')).toHaveLength(100);

    // Each one run, of the trigger's tenant, with its message as input, completed.
    await eventually(
      async () => {
        for (const runId of ids) {
          const events = await client.readEvents(runId);
          if (events.at(-1)?.type !== 'run_completed') return undefined;
          const requested = events.filter((e) => e.type === 'run_requested');
          expect(requested).toHaveLength(1);
          const first = requested[0];
          if (first?.type === 'run_requested') {
            expect(first.data.request.tenant).toBe('acme');
            expect(first.data.request.input).toEqual({
              order: Number(runId.slice('trg-orders-order-'.length)),
            });
            expect(first.data.request.metadata?.['dura.trigger']).toBe('orders');
          }
        }
        return true;
      },
      'every run completed',
      90_000,
    );
  });

  it("holds its runs to the tenant's authorization like any submission: a forbidden agent is rejected", async () => {
    await client.eventTriggers.create({
      id: 'forbidden',
      tenant: 'acme',
      subject: 'dura.event.support.ticket',
      request: { v: 1, agent: { kind: 'agent', name: 'support' } },
    });
    await boundOnEveryPlanner('forbidden');
    await system.js.publish('dura.event.support.ticket', JSON.stringify({ ticket: 7 }), {
      msgID: 'ticket-7',
    });
    const events = await eventually(
      async () => {
        const found = await client.readEvents('trg-forbidden-ticket-7');
        return found.some((e) => e.type === 'run_rejected') ? found : undefined;
      },
      'the run rejected',
      60_000,
    );
    const rejected = events.find((e) => e.type === 'run_rejected');
    expect(JSON.stringify(rejected)).toMatch(/tenant acme may not start agent support/);
    expect(events.some((e) => e.type === 'run_started')).toBe(false);
  });

  it('is listed, and once deleted starts nothing more', async () => {
    expect((await client.eventTriggers.list()).map((t) => t.spec.id)).toEqual(['forbidden', 'orders']);
    expect(await client.eventTriggers.delete('orders')).toBe(true);
    await Promise.all(planners.map((p) => p.waitForOutput(/event trigger removed.*orders/, 30_000)));
    await system.js.publish('dura.event.orders.created', JSON.stringify({ order: 999 }), {
      msgID: 'order-999',
    });
    // The trigger's consumer is gone: the message has no one to start a run for it.
    await eventually(
      async () =>
        (await system.jsm.consumers.list(STREAMS.events).next()).every((c) => c.name !== 'trigger-orders')
          ? true
          : undefined,
      'the consumer of the deleted trigger removed',
    );
    expect(await runIds('trg-orders-order-999')).toEqual([]);
  });
});
