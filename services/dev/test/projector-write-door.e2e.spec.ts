// The projector's HTTP write door under the shipped NATS permissions: run as the DURA_PROJECTOR user of
// deploy/nats/permissions.conf (unchanged), it serves POST /runs, signals, cancel, fork, /schedules, /triggers
// and POST /events, and the server still denies it everything else a compromised projector could use. Then what a web page can send
// the open (no credentials, loopback) API: a text/plain POST, a foreign Origin, a rebound Host.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { openDatabase } from '@dura/db';
import { projectorRoutes } from '@dura/projector';
import { createLogger, startHttpServer } from '@dura/service-kit';
import type { NatsConnection } from '@nats-io/nats-core';
import { connectDuraClient } from '@dura/client';
import { runSubject, STREAMS, SUBJECTS, tokensSubject } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { eventually } from './system';
import {
  connectAs,
  expectDenied,
  securityOf,
  startSecuredNats,
  startShippedServices,
  type SecuredNats,
  type ShippedServices,
} from './secured-nats';

// Postgres from the shared helper; NATS is our own, started with the shipped permissions.
const infra = useTestInfra({ nats: false });
let nats: SecuredNats;
let services: ShippedServices;
let projectorNc: NatsConnection;
let adminNc: NatsConnection;
let admin: ReturnType<typeof connectDuraClient>;

beforeAll(async () => {
  nats = await startSecuredNats();
  services = await startShippedServices(nats, infra().db.url);
  projectorNc = await connectAs(nats.url, 'projector');
  adminNc = await connectAs(nats.url, 'admin');
  admin = connectDuraClient({ natsUrl: nats.url, apiUrl: services.apiUrl, security: securityOf('admin') });
}, 180_000);

afterAll(async () => {
  await admin?.close();
  await projectorNc?.close();
  await adminNc?.close();
  await services?.stop();
  await nats?.close();
});

interface Answer {
  status: number;
  body: { error?: { code: string; message: string }; [key: string]: unknown };
}

/** A JSON call to the API, as the CLI's MCP server and the console make it. */
async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${services.apiUrl}${path}`, {
    method,
    headers: { ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Answer['body']) : {} };
}

const statusOf = async (runId: string) => {
  const { status, body } = await call('GET', `/runs/${runId}`);
  return status === 200 ? (body['status'] as string) : undefined;
};
const reaches = (runId: string, wanted: string, what: string) =>
  eventually(async () => ((await statusOf(runId)) === wanted ? true : undefined), what, 60_000);

const waitingForGo = {
  agent: {
    kind: 'scripted',
    steps: [
      { tool: 'dura.wait_for_signal', args: { name: 'go' } },
      { tool: 'echo', args: { door: true } },
    ],
  },
};

describe('the write door, served as the shipped DURA_PROJECTOR user', () => {
  it('POST /runs starts a run; a signal drives it to the end; the same key again is a duplicate', async () => {
    const first = await call('POST', '/runs', waitingForGo, { 'idempotency-key': 'door-run' });
    expect(first, JSON.stringify(first.body)).toMatchObject({ status: 202, body: { duplicate: false } });
    await reaches('door-run', 'waiting', 'the HTTP-submitted run to wait for its signal');
    const signal = await call('POST', '/runs/door-run/signals', { name: 'go', payload: { ok: true } });
    expect(signal.status, JSON.stringify(signal.body)).toBe(202);
    await reaches('door-run', 'completed', 'the run to complete after the HTTP signal');
    const again = await call('POST', '/runs', waitingForGo, { 'idempotency-key': 'door-run' });
    expect(again).toMatchObject({ status: 202, body: { duplicate: true } });
  });

  it('POST /runs/:id/cancel cancels a run', async () => {
    expect((await call('POST', '/runs', { ...waitingForGo, runId: 'door-cancel' })).status).toBe(202);
    await reaches('door-cancel', 'waiting', 'the run to wait');
    expect((await call('POST', '/runs/door-cancel/cancel', { reason: 'test' })).status).toBe(202);
    await reaches('door-cancel', 'cancelled', 'the run to be cancelled');
  });

  it('POST /runs/:id/fork forks a finished run', async () => {
    const events = (await call('GET', '/runs/door-run/events')).body['events'] as { seq: number }[];
    const atSeq = events[1]?.seq ?? 0;
    const fork = await call('POST', '/runs/door-run/fork', { atSeq, runId: 'door-fork' });
    expect(fork, JSON.stringify(fork.body)).toMatchObject({ status: 202, body: { runId: 'door-fork' } });
    await eventually(
      async () => ((await admin.readEvents('door-fork')).length > 0 ? true : undefined),
      'the fork to be in the log',
      60_000,
    );
    expect((await admin.readEvents('door-fork'))[0]).toMatchObject({
      data: { forkOf: { runId: 'door-run', atSeq } },
    });
  });

  it('/schedules: create, read, pause, resume, trigger (its run starts), delete', async () => {
    const spec = {
      id: 'door_tick',
      everyMs: 3_600_000,
      request: { v: 1, agent: { kind: 'scripted', steps: [] } },
      overlap: 'allow_all',
    };
    const created = await call('POST', '/schedules', spec);
    expect(created, JSON.stringify(created.body)).toMatchObject({ status: 201, body: { created: true } });
    expect((await call('GET', '/schedules/door_tick')).status).toBe(200);
    expect(await call('POST', '/schedules/door_tick/pause', {})).toMatchObject({
      status: 200,
      body: { paused: true },
    });
    expect(await call('POST', '/schedules/door_tick/resume', {})).toMatchObject({
      status: 200,
      body: { paused: false },
    });
    const triggered = await call('POST', '/schedules/door_tick/trigger', { key: 'k1' });
    expect(triggered).toMatchObject({ status: 202, body: { runId: 'sch-door_tick-mk1' } });
    await reaches('sch-door_tick-mk1', 'completed', 'the triggered run to complete');
    expect(await call('DELETE', '/schedules/door_tick')).toMatchObject({
      status: 200,
      body: { deleted: true },
    });
    expect((await call('GET', '/schedules/door_tick')).status).toBe(404);
  });

  it('/triggers and /events: create a trigger, an event starts its run, delete it, the next event starts none', async () => {
    const trigger = {
      id: 'door_orders',
      subject: 'dura.event.door.orders.>',
      request: {
        v: 1,
        agent: { kind: 'scripted', steps: [{ tool: 'echo', args: { order: '$input.order' } }] },
      },
    };
    const created = await call('POST', '/triggers', trigger);
    expect(created, JSON.stringify(created.body)).toMatchObject({ status: 201, body: { created: true } });
    expect((await call('GET', '/triggers')).body['triggers']).toEqual([
      expect.objectContaining({ spec: expect.objectContaining({ id: 'door_orders' }) }),
    ]);
    // Messages published from its creation on start runs, even before a planner has bound its consumer.
    const sent = await call('POST', '/events', {
      subject: 'dura.event.door.orders.created',
      payload: { order: 42 },
      id: 'door-42',
    });
    expect(sent, JSON.stringify(sent.body)).toMatchObject({
      status: 202,
      body: { subject: 'dura.event.door.orders.created', id: 'door-42', duplicate: false },
    });
    await reaches('trg-door_orders-door-42', 'completed', 'the run the event started to complete');
    expect((await admin.readEvents('trg-door_orders-door-42')).map((e) => e.type)).toContain(
      'tool_call_completed',
    );
    expect(await call('DELETE', '/triggers/door_orders')).toMatchObject({
      status: 200,
      body: { deleted: true },
    });
    expect((await call('GET', '/triggers/door_orders')).status).toBe(404);
    const after = await call('POST', '/events', {
      subject: 'dura.event.door.orders.created',
      payload: { order: 0 },
      id: 'door-after',
    });
    expect(after.status).toBe(202);
    // Handled once the trigger's consumer has acknowledged it (or the planner removed the consumer).
    const jsm = await jetstreamManager(adminNc);
    await eventually(
      async () => {
        const info = await jsm.consumers.info(STREAMS.events, 'trigger-door_orders').catch(() => undefined);
        return info === undefined || info.ack_floor.stream_seq >= (after.body['seq'] as number)
          ? true
          : undefined;
      },
      'the event published after the delete to be handled',
      60_000,
    );
    // A run request it made would now be on the intake, ahead of one submitted next: once that is done, a run of
    // the event would have started.
    const control = { runId: 'door-after-control', agent: { kind: 'scripted', steps: [] } };
    expect((await call('POST', '/runs', control)).status).toBe(202);
    await reaches('door-after-control', 'completed', 'a run submitted after the last event was handled');
    expect(await statusOf('trg-door_orders-door-after')).toBeUndefined();
  });

  it('no service was denied anything on the way', () => {
    for (const output of services.outputs()) expect(output).not.toMatch(/NATS denied|Permissions Violation/);
  });
});

describe('what the projector user still may not do: denied by the server', () => {
  const thought = JSON.stringify({
    type: 'thought',
    v: 1,
    data: { text: 'forged' },
    meta: { runId: 'door-run' },
  });

  it('append to a run, relay forged tokens, publish tasks or dead letters', async () => {
    const js = jetstream(projectorNc);
    for (const subject of [
      runSubject('door-run'),
      tokensSubject('door-run'),
      SUBJECTS.decideTask,
      `${SUBJECTS.toolTaskPrefix}.echo`,
      SUBJECTS.timerTask,
      'dura.dlq.forged',
    ])
      await expectDenied(js.publish(subject, thought));
  });

  it('write any bucket but the schedules and triggers, the payload store, or ack a task', async () => {
    const js = jetstream(projectorNc);
    for (const subject of [
      '$KV.dura_cancellations.door-run',
      '$KV.dura_snapshots.door-run',
      '$KV.dura_parked_runs.door-run',
      '$KV.dura_tenant_runs.acme',
      '$O.dura_payloads.C.forged',
      '$JS.ACK.DURA_TASKS.planner-decide.1.1.1.1.1',
    ])
      await expectDenied(js.publish(subject, '{}'));
  });

  it('update, purge or delete a stream, delete a message, or create a stream that captures others', async () => {
    const jsm = await jetstreamManager(projectorNc);
    const runs = await jsm.streams.info(STREAMS.runs);
    await expectDenied(jsm.streams.update(STREAMS.runs, { ...runs.config, max_age: 1_000_000_000 }));
    await expectDenied(jsm.streams.purge(STREAMS.requests));
    await expectDenied(jsm.streams.delete(STREAMS.runs));
    await expectDenied(jsm.streams.deleteMessage(STREAMS.requests, 1));
    await expectDenied(jsm.streams.add({ name: 'SNOOP', subjects: ['snoop.>'] }));
  });
});

describe('a projector user without the door (an older permission set)', () => {
  /** The one hint of the HTTP command door, for a write to `subject`. */
  const doorHint = (subject: string) =>
    `check that the projector's NATS user may publish to "${subject}" (the write door of DURA_PROJECTOR in ` +
    'deploy/nats/permissions.conf; docs/security/nats.md), then retry the same request (it is deduplicated)';

  it('answers POST /runs, /schedules, /triggers and /events with 500 naming the subject to allow', async () => {
    const door = / {6}# The HTTP write door[\s\S]*?"\$JS\.API\.DIRECT\.GET\.KV_dura_triggers\.>"\n/;
    const older = await startSecuredNats({ patchPermissions: (conf) => conf.replace(door, '') });
    const nc = await connectAs(older.url, 'projector');
    const database = await openDatabase({ url: infra().db.url });
    const log = createLogger({ service: 'test', level: 'error', write: () => undefined });
    const routes = projectorRoutes({
      db: database.db,
      position: () => 0,
      js: jetstream(nc),
      jsm: await jetstreamManager(nc),
      nc,
    });
    const api = await startHttpServer({ port: 0, host: '127.0.0.1', routes, log });
    try {
      const post = async (path: string, body: unknown) => {
        const response = await fetch(`${api.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Answer['body'] };
      };
      const run = await post('/runs', { runId: 'older-perms', agent: { kind: 'scripted', steps: [] } });
      expect(run.status).toBe(500);
      expect(run.body.error?.message).toMatch(
        /^NATS denied the projector's user publishing to "dura\.submit", so .* was not accepted: /,
      );
      expect(run.body.error?.message).toContain(doorHint('dura.submit'));
      const schedule = await post('/schedules', {
        id: 'older_tick',
        everyMs: 60_000,
        request: { v: 1, agent: { kind: 'scripted', steps: [] } },
      });
      expect(schedule.status).toBe(500);
      expect(schedule.body.error?.message).toContain(doorHint('$KV.dura_schedules.>'));
      const trigger = await post('/triggers', {
        id: 'older_orders',
        subject: 'dura.event.older.>',
        request: { v: 1, agent: { kind: 'scripted', steps: [] } },
      });
      expect(trigger.status).toBe(500);
      expect(trigger.body.error?.message).toContain(doorHint('$KV.dura_triggers.>'));
      const event = await post('/events', { subject: 'dura.event.older.x', payload: 1 });
      expect(event.status).toBe(500);
      expect(event.body.error?.message).toMatch(
        /^NATS denied the projector's user publishing to "dura\.event\.older\.x", so .* was not accepted: /,
      );
      expect(event.body.error?.message).toContain(doorHint('dura.event.older.x'));
    } finally {
      await api.close();
      await database.close();
      await nc.close();
      await older.close();
    }
  });
});

/** One request with exactly these headers (node:http: fetch will not send another Host). */
function raw(path: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const { port } = new URL(services.apiUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'],
        }),
      );
    });
    req.once('error', reject);
    req.end(body);
  });
}

describe('the open API (no credentials, bound to 127.0.0.1) refuses what a web page can send', () => {
  const notify = (runId: string) =>
    JSON.stringify({
      runId,
      agent: { kind: 'scripted', steps: [{ tool: 'echo', args: { from: 'a page' } }] },
    });

  it('a text/plain POST /runs is 415 and starts nothing', async () => {
    const plain = await raw('/runs', 'POST', { 'content-type': 'text/plain' }, notify('page-run'));
    expect(plain).toMatchObject({ status: 415, body: { error: { code: 'unsupported_media_type' } } });
    // What a page on another site would send: refused for its origin before its content type.
    const crossSite = { 'content-type': 'text/plain', origin: 'https://evil.example' };
    expect((await raw('/runs', 'POST', crossSite, notify('page-run'))).status).toBe(403);
    // The intake is in order: once a run submitted after them is done, the refused ones would have started.
    expect((await call('POST', '/runs', JSON.parse(notify('page-control')))).status).toBe(202);
    await reaches('page-control', 'completed', 'the run submitted after the refused ones');
    expect(await admin.readEvents('page-run')).toEqual([]);
    expect((await call('GET', '/runs/page-run')).status).toBe(404);
  });

  it("a page of another origin is 403, on reads and writes; the API's own origin passes", async () => {
    const origin = { origin: 'https://evil.example' };
    const read = await call('GET', '/runs', undefined, origin);
    expect(read).toMatchObject({ status: 403, body: { error: { code: 'origin_forbidden' } } });
    const write = await call('POST', '/runs/door-cancel/signals', { name: 'go' }, origin);
    expect(write.status).toBe(403);
    expect((await call('GET', '/runs', undefined, { origin: services.apiUrl })).status).toBe(200);
  });

  it('a Host of evil.example (DNS rebinding) is 403, on reads and writes', async () => {
    expect(await raw('/runs', 'GET', { host: 'evil.example' })).toMatchObject({
      status: 403,
      body: { error: { code: 'host_forbidden' } },
    });
    const json = { host: 'evil.example', 'content-type': 'application/json' };
    expect((await raw('/runs', 'POST', json, notify('rebound-run'))).status).toBe(403);
    expect((await raw('/runs', 'GET', { host: new URL(services.apiUrl).host })).status).toBe(200);
  });
});
