// The worker deployable under the shipped NATS permissions (deploy/nats/permissions.conf, user `worker` with
// DURA_WORKER): runs whose calls run in place complete with nothing denied, and what the worker must not do (read
// another user's replies, take a client's place, destroy or capture stored data) the server refuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connectDuraClient } from '@dura/client';
import { STREAMS, SUBJECTS } from '@dura/contracts';
import { fold } from '@dura/core';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { echoPlan, eventually, startService } from './system';
import { envOf, expectDenied, securityOf, useSecuredNats } from './secured-nats';

// Postgres from the shared helper; NATS is our own, started with the shipped permissions.
const infra = useTestInfra({ nats: false });
const { nats, as } = useSecuredNats();
let worker: ManagedProcess | undefined;

beforeAll(async () => {
  // Alone: the worker creates the streams, buckets and consumers itself, as its user.
  worker = await startService('worker', {
    NATS_URL: nats.url,
    DATABASE_URL: infra().db.url,
    ...envOf('worker'),
  });
}, 180_000);

afterAll(async () => {
  await worker?.kill('SIGTERM');
});

const client = () => connectDuraClient({ natsUrl: nats.url, security: securityOf('client') });

describe('a worker connected as its own user', () => {
  it('runs a run end to end with its calls in place: no tool task and no decide task', async () => {
    const admin = await jetstreamManager(await as('admin'));
    const tasksBefore = (await admin.streams.info(STREAMS.tasks)).state.last_seq;
    const dura = client();
    try {
      const runId = 'worker-perm-run';
      expect(await dura.submitRun(echoPlan(runId, 3) as never)).toEqual({ runId, duplicate: false });
      const types: string[] = [];
      for await (const event of dura.watchRun(runId)) types.push(event.type);
      expect(types.at(-1)).toBe('run_completed');
      expect(types.filter((type) => type === 'tool_call_completed')).toHaveLength(3);
      expect(fold(await dura.readEvents(runId)).status).toBe('completed');
    } finally {
      await dura.close();
    }
    expect((await admin.streams.info(STREAMS.tasks)).state.last_seq).toBe(tasksBefore);
    expect(worker!.output()).not.toMatch(/NATS denied|Permissions Violation/);
  });

  it('a timer, a child run and payloads over the object-store threshold work under the same user', async () => {
    const dura = client();
    try {
      const runId = 'worker-perm-features';
      await dura.submitRun({
        runId,
        agent: {
          kind: 'scripted',
          steps: [
            { tool: 'dura.sleep', args: { seconds: 1 } },
            {
              tool: 'dura.run_agent',
              args: { agent: { kind: 'scripted', steps: [{ tool: 'echo', args: { child: true } }] } },
            },
            { tool: 'echo', args: { big: 'x'.repeat(100_000) } },
          ],
        },
      } as never);
      const types: string[] = [];
      for await (const event of dura.watchRun(runId)) types.push(event.type);
      expect(types.at(-1), types.join(', ')).toBe('run_completed');
      expect(types).toEqual(expect.arrayContaining(['timer_fired', 'child_run_completed']));
      const events = await dura.readEvents(runId);
      const refs = events.flatMap((e) => {
        const data = e.data as { argsRef?: unknown; resultRef?: unknown };
        return [data.argsRef, data.resultRef].filter((ref) => ref !== undefined);
      });
      expect(refs.length).toBeGreaterThanOrEqual(1);
    } finally {
      await dura.close();
    }
    // The worker announced its agents and its tools into the catalogue, both allowed to it.
    await eventually(
      async () => {
        const kv = await jetstreamManager(await as('admin')).then((jsm) =>
          jsm.streams.info('KV_dura_catalogue'),
        );
        return kv.state.messages > 0 || undefined;
      },
      'the worker to announce what it serves',
      30_000,
    );
    expect(worker!.output()).not.toMatch(/NATS denied|Permissions Violation/);
  });
});

describe('what the worker must not do is denied by the server (a compromised worker)', () => {
  it("cannot read another user's replies or take deliveries outside its own inbox", async () => {
    const nc = await as('worker');
    for (const subject of [
      '_INBOX.planner.>',
      '_INBOX.gateway.>',
      '_INBOX.client.>',
      'dura.task.>',
      'dura.run.*',
    ])
      expect(String(await nc.subscribe(subject).closed), subject).toMatch(
        /Permissions Violation for Subscription/,
      );
  });

  it("cannot take a client's place: no fork, no event, no trigger write", async () => {
    const js = jetstream(await as('worker'));
    await expectDenied(js.publish(SUBJECTS.fork, '{}'));
    await expectDenied(js.publish('dura.event.orders', '{}'));
    await expectDenied(js.publish('$KV.dura_triggers.t1', '{}'));
  });

  it('cannot destroy stored data: no stream delete or purge, no message delete in the log, no restore', async () => {
    const jsm = await jetstreamManager(await as('worker'));
    await expectDenied(jsm.streams.delete(STREAMS.runs));
    await expectDenied(jsm.streams.purge(STREAMS.tasks));
    await expectDenied(jsm.streams.deleteMessage(STREAMS.runs, 1));
    await expectDenied(jsm.streams.deleteMessage('KV_dura_snapshots', 1));
  });

  it("cannot create a stream or a consumer outside Dura's own, which could capture other users' traffic", async () => {
    const jsm = await jetstreamManager(await as('worker'));
    await expectDenied(jsm.streams.add({ name: 'CAPTURE', subjects: ['_INBOX.>'] }));
    await expectDenied(jsm.consumers.add(STREAMS.deadLetters, { durable_name: 'snoop' }));
  });
});
