import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import postgres from 'postgres';
import { connectDuraClient } from '@dura/client';
import { DeadLetterSchema, runSubject, STREAMS, SUBJECTS, type DeadLetter } from '@dura/contracts';
import { freePort, useTestInfra, type ManagedProcess } from '@dura/testing';
import { echoPlan, eventually, getJson, startService } from './system';
import { SERVICE_DURABLES, settledConsumer } from './consumers-support';
import { connectAs, envOf, securityOf, startSecuredNats, type SecuredNats } from './secured-nats';
import { HOSTILITIES, hostileMessages, type HostileMessage } from './hostile-messages';

// Fixed: a failure reproduces with the same messages. Change it to explore other depths and shapes.
const SEED = 20_261_125;
const TARGET = 'hx-target';
// eslint-disable-next-line no-control-regex -- U+0000 is what must never reach a store.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// Postgres from the shared helper; NATS is our own, started with the shipped permissions.
const infra = useTestInfra({ nats: false });
let nats: SecuredNats;
let apiUrl: string;
let client: ReturnType<typeof connectDuraClient>;
let clientJs: JetStreamClient;
let admin: NatsConnection;
let sql: postgres.Sql;
const connections: NatsConnection[] = [];
const processes: ManagedProcess[] = [];

beforeAll(async () => {
  nats = await startSecuredNats();
  apiUrl = `http://127.0.0.1:${await freePort()}`;
  const common = {
    NATS_URL: nats.url,
    DATABASE_URL: infra().db.url,
    PROJECTOR_HTTP_PORT: new URL(apiUrl).port,
  };
  processes.push(await startService('planner', { ...common, ...envOf('planner') }));
  processes.push(await startService('tool-gateway', { ...common, ...envOf('gateway') }));
  processes.push(await startService('projector', { ...common, ...envOf('projector') }));
  const clientNc = await connectAs(nats.url, 'client');
  admin = await connectAs(nats.url, 'admin');
  connections.push(clientNc, admin);
  clientJs = jetstream(clientNc);
  client = connectDuraClient({ natsUrl: nats.url, apiUrl, security: securityOf('client') });
  sql = postgres(infra().db.url, { max: 2, onnotice: () => undefined });
}, 180_000);

afterAll(async () => {
  await client?.close();
  await sql?.end({ timeout: 5 });
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  await Promise.allSettled(connections.map((nc) => nc.close()));
  await nats?.close();
});

async function runState(runId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const { status, body } = await getJson(`${apiUrl}/runs/${runId}`);
  return { status, body: body as Record<string, unknown> };
}

/** Every dead letter so far, read as the admin user through an ordered consumer. */
async function deadLetters(): Promise<DeadLetter[]> {
  const js = jetstream(admin);
  const info = await (await jetstreamManager(admin)).streams.info(STREAMS.deadLetters);
  if (info.state.messages === 0) return [];
  const messages = await (await js.consumers.get(STREAMS.deadLetters)).consume();
  const out: DeadLetter[] = [];
  for await (const msg of messages) {
    out.push(DeadLetterSchema.parse(JSON.parse(new TextDecoder().decode(msg.data))));
    if (msg.info.pending === 0) break;
  }
  await messages.close();
  return out;
}

/** Publishes as a client may (requests, signals, forks) or, for the subjects only services write, as admin. */
async function publish(message: { subject: string; body: Uint8Array }): Promise<number> {
  const js =
    message.subject.startsWith('dura.task.') || message.subject.startsWith('dura.run.')
      ? jetstream(admin)
      : clientJs;
  return (await js.publish(message.subject, message.body)).seq;
}

describe('hostile input on every consumed subject, under the shipped NATS permissions', () => {
  it('is refused on its first delivery with its reason, names its run, and the services keep serving', async () => {
    // A live run waiting for a signal: the messages naming it must leave it exactly where it is.
    await client.submitRun({
      runId: TARGET,
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'dura.wait_for_signal', args: { name: 'go' } },
          { tool: 'echo', args: { after: 'go' } },
        ],
      },
    } as never);
    const waiting = await eventually(
      async () => {
        const { status, body } = await runState(TARGET);
        return status === 200 && body['status'] === 'waiting' ? body : undefined;
      },
      'the target run to wait for its signal',
      60_000,
    );

    const hostile = hostileMessages(TARGET, SEED);
    const sent: (HostileMessage & { seq: number })[] = [];
    for (const message of hostile) sent.push({ ...message, seq: await publish(message) });
    // A good request whose run id is taken: its dead letter names the run, whose log gets nothing.
    const conflict = {
      subject: SUBJECTS.submit,
      body: new TextEncoder().encode(JSON.stringify(echoPlan(TARGET, 1))),
    };
    const conflictSeq = await publish(conflict);

    // Dead letters: one per message, on its first delivery, with the expected code, naming the run.
    const letters = await eventually(
      async () => {
        const all = await deadLetters();
        return all.length > sent.length ? all : undefined;
      },
      `${sent.length + 1} dead letters`,
      120_000,
    );
    expect(letters).toHaveLength(sent.length + 1);
    expect(letters.find((l) => l.streamSeq === conflictSeq && l.subject === SUBJECTS.submit)).toMatchObject({
      runId: TARGET,
      deliveries: 1,
      error: { code: 'run_id_conflict' },
    });
    for (const message of sent) {
      const what = `${message.door} ${message.hostility}`;
      const letter = letters.find((l) => l.subject === message.subject && l.streamSeq === message.seq);
      expect(letter, `a dead letter for ${what}`).toBeDefined();
      expect(letter?.source, what).toBe(message.source);
      expect(letter?.error.code, `${what}: ${letter?.error.message}`).toBe(message.code);
      expect(letter?.deliveries, `${what} is refused on its first delivery`).toBe(1);
      expect(letter?.runId, `${what} names its run`).toBe(message.runId);
      expect(letter?.error.message ?? '', what).not.toMatch(UNSTORABLE);
      for (const issue of letter?.issues ?? []) expect(issue, what).not.toMatch(UNSTORABLE);
    }

    // Nothing was retried as transient: no consumer redelivered anything, none holds anything.
    const jsm = await jetstreamManager(admin);
    for (const consumer of SERVICE_DURABLES) {
      const durable = consumer[1];
      const info = await settledConsumer(jsm, consumer, `consumer ${durable} to have settled everything`);
      expect(info.num_redelivered, `${durable} redelivered nothing`).toBe(0);
    }

    // Each run a request named is `rejected` with the reason, through the API; none is left at its first event.
    for (const message of sent.filter((m) => m.door === 'submit' || m.door === 'fork')) {
      const what = `${message.door} ${message.hostility}`;
      const state = await eventually(
        async () => {
          const { status, body } = await runState(message.runId);
          return status === 200 ? body : undefined;
        },
        `run ${message.runId} (${what}) through the API`,
        60_000,
      );
      expect(state['status'], what).toBe('rejected');
      expect(JSON.stringify(state), what).toContain(message.code);
      const { body: events } = await getJson(`${apiUrl}/runs/${message.runId}/events`);
      expect(JSON.stringify(events), what).toContain('run_rejected');
      expect(JSON.stringify(events), what).not.toContain('run_requested');
    }
    const [stuck] = await sql<{ count: string }[]>`
      select count(*) from runs where run_id like 'hx-%' and state->>'status' = 'pending'`;
    expect(Number(stuck?.count), 'no run left at its first event').toBe(0);

    // The run the others named was not touched.
    const after = await runState(TARGET);
    expect(after.body['status']).toBe('waiting');
    expect(after.body['lastSeq']).toBe(waiting['lastSeq']);

    // The services keep serving: the target finishes on a good signal, and a new run completes.
    await client.signal(TARGET, 'go', { payload: { ok: true } });
    await client.submitRun(echoPlan('hx-after', 3) as never);
    for (const runId of [TARGET, 'hx-after'])
      await eventually(
        async () => ((await runState(runId)).body['status'] === 'completed' ? true : undefined),
        `run ${runId} to complete after the hostile messages`,
        60_000,
      );
    const exited = await Promise.race([
      Promise.any(processes.map((proc) => proc.exited.then(() => proc.name))),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100)),
    ]);
    expect(exited, 'every service still runs').toBeUndefined();
  });

  it('on the run log: the projector records a storable error, the planner refuses the run on first delivery', async () => {
    const sent: { runId: string; seq: number; hostility: string }[] = [];
    for (const [i, message] of hostileMessages(TARGET, SEED + 100)
      .filter((m) => m.door === 'signal')
      .entries()) {
      // The same hostile values, as the data of an event someone with publish rights on the log wrote.
      const runId = `hx-log-${i}`;
      const head = new TextEncoder().encode(
        `{"type":"run_requested","v":1,"meta":{"id":"e-${i}","runId":"${runId}","ts":"2026-11-25T00:00:00Z","correlationId":"${runId}"},"data":{"request":`,
      );
      const value = message.body;
      const body = new Uint8Array([...head, ...value, ...new TextEncoder().encode('}}')]);
      sent.push({
        runId,
        hostility: message.hostility,
        seq: await publish({ subject: runSubject(runId), body }),
      });
    }
    expect(sent).toHaveLength(HOSTILITIES.length);
    const rows = await eventually(
      async () => {
        const rows = await sql<{ seq: string; code: string; message: string }[]>`
          select seq, code, message from projection_errors where run_id like 'hx-log-%'`;
        return rows.length >= sent.length ? rows : undefined;
      },
      `${sent.length} projection errors`,
      60_000,
    );
    for (const { seq, hostility, runId } of sent) {
      const row = rows.find((r) => Number(r.seq) === seq);
      expect(row, `a projection error for ${hostility}`).toBeDefined();
      expect(row?.message, hostility).not.toMatch(UNSTORABLE);
      expect((await runState(runId)).status, `${hostility}: no half-projected run`).toBe(404);
    }

    // A decide task for such a run: the planner cannot read its log, and says so on the first delivery.
    const before = (await deadLetters()).length;
    const tasks: number[] = [];
    for (const { runId } of sent)
      tasks.push(
        await publish({
          subject: SUBJECTS.decideTask,
          body: new TextEncoder().encode(JSON.stringify({ v: 1, runId, afterSeq: 1, reason: 'started' })),
        }),
      );
    const letters = await eventually(
      async () => {
        const all = (await deadLetters()).slice(before);
        return all.length >= tasks.length ? all : undefined;
      },
      `${tasks.length} dead letters for decide tasks of unreadable runs`,
      60_000,
    );
    for (const [i, seq] of tasks.entries()) {
      const letter = letters.find((l) => l.streamSeq === seq && l.source === 'decide');
      expect(letter?.error.code, letter?.error.message).toBe('corrupt_event');
      expect(letter?.deliveries).toBe(1);
      expect(letter?.runId).toBe(sent[i]?.runId);
    }
  });

  it('on the HTTP API: a signal body over the limits or not storable answers 400 (413 when too large) with the reason', async () => {
    const post = async (body: Uint8Array): Promise<{ status: number; text: string }> => {
      const response = await fetch(`${apiUrl}/runs/hx-after/signals`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      return { status: response.status, text: await response.text() };
    };
    const encode = (text: string) => new TextEncoder().encode(text);
    const cases: [string, Uint8Array, RegExp][] = [
      ['deep', encode(`{"name":"note","payload":${'['.repeat(5_000)}${']'.repeat(5_000)}}`), /deeper than/],
      ['raw NUL', encode('{"name":"note","payload":"a\u0000b"}'), /not valid JSON/],
      [
        'not UTF-8',
        new Uint8Array([...encode('{"name":"note","payload":"'), 0xff, 0x00, ...encode('"}')]),
        /UTF-8/,
      ],
      ['escaped NUL', encode('{"name":"note","payload":"a\\u0000b"}'), /cannot be stored/],
      [
        'many keys',
        encode(
          `{"name":"note","payload":{${Array.from({ length: 10_001 }, (_, i) => `"${i}":0`).join(',')}}}`,
        ),
        /more than|exceeds/,
      ],
    ];
    for (const [what, body, reason] of cases) {
      const { status, text } = await post(body);
      expect([400, 413], `${what}: ${status} ${text}`).toContain(status);
      expect(text, what).toMatch(reason);
      expect(text, what).not.toMatch(UNSTORABLE);
    }
  });
});
