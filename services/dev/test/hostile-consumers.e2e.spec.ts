import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connectDuraClient } from '@dura/client';
import { runSubject, STREAMS, SUBJECTS } from '@dura/contracts';
import { MAX_CONSUMERS } from '@dura/event-store';
import { freePort, spawnTsEntry, useTestInfra, type ManagedProcess } from '@dura/testing';
import { echoPlan, eventually, startService } from './system';
import { connectAs, envOf, securityOf, startSecuredNats, type SecuredNats } from './secured-nats';
import { openStream } from './sse-probe';

// The shipped permissions, a real projector with API tokens and small stream caps, the client credential.
const infra = useTestInfra({ nats: false });
const PER_TOKEN = 4;
const TOKENS = {
  a: 'ops-a-token-5c1d0e2f9a',
  b: 'ops-b-token-77f03b1e4c',
  cycler: 'cycler-token-0a9e33d1f2',
};
let nats: SecuredNats;
let apiUrl: string;
let admin: JetStreamManager;
let tokensDir: string;
const processes: ManagedProcess[] = [];
const connections: NatsConnection[] = [];

async function as(user: 'client' | 'admin'): Promise<NatsConnection> {
  const nc = await connectAs(nats.url, user);
  connections.push(nc);
  return nc;
}

/** The operation is refused by the server's permissions (nats.js puts the violation in the error or its cause). */
async function denied(operation: Promise<unknown>): Promise<void> {
  const err = await operation.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(err, 'the operation was allowed').toBeInstanceOf(Error);
  expect(`${err?.message} ${(err?.cause as Error | undefined)?.message ?? ''}`).toMatch(
    /Permissions Violation/,
  );
}

const consumerCount = async (stream: string): Promise<number> =>
  (await admin.streams.info(stream)).state.consumer_count;

beforeAll(async () => {
  nats = await startSecuredNats();
  tokensDir = mkdtempSync(join(tmpdir(), 'dura-hostile-consumers-'));
  const tokensFile = join(tokensDir, 'tokens.json');
  writeFileSync(
    tokensFile,
    JSON.stringify(
      Object.entries(TOKENS).map(([name, token]) => ({ name, token, tenant: '*', scopes: ['read'] })),
    ),
  );
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  const common = { NATS_URL: nats.url, DATABASE_URL: infra().db.url, PROJECTOR_HTTP_PORT: String(port) };
  processes.push(await startService('planner', { ...common, ...envOf('planner') }));
  processes.push(await startService('tool-gateway', { ...common, ...envOf('gateway') }));
  processes.push(
    await startService('projector', {
      ...common,
      ...envOf('projector'),
      PROJECTOR_AUTH_REQUIRED: 'true',
      PROJECTOR_API_TOKENS_FILE: tokensFile,
      PROJECTOR_SSE_MAX_PER_TOKEN: String(PER_TOKEN),
    }),
  );
  admin = await jetstreamManager(await as('admin'));
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  await Promise.allSettled(connections.map((nc) => nc.close()));
  await nats?.close();
  if (tokensDir) rmSync(tokensDir, { recursive: true, force: true });
});

describe('the client credential reads and follows runs without any consumer', () => {
  it('submits, watches live, resumes from a seq, gets and reads runs through the SDK as the client user', async () => {
    const client = connectDuraClient({ natsUrl: nats.url, apiUrl, security: securityOf('client') });
    try {
      const runId = 'hostile-sdk-run';
      const consumersBefore = await consumerCount(STREAMS.runs);
      // Watching starts before the run exists: history, then live events through wake-ups.
      const watched: number[] = [];
      const watching = (async () => {
        for await (const event of client.watchRun(runId)) watched.push(event.seq);
      })();
      await client.submitRun(echoPlan(runId, 3) as never);
      await watching;
      const events = await client.readEvents(runId);
      expect(events.at(-1)?.type).toBe('run_completed');
      expect(watched).toEqual(events.map((e) => e.seq));
      expect((await client.getRun(runId)).status).toBe('completed');
      expect(await client.lastSeq(runId)).toBe(events.at(-1)?.seq);
      // Resume after the fifth event: exactly the rest.
      const fifth = events[4]!.seq;
      const rest: number[] = [];
      for await (const event of client.watchRun(runId, { fromSeq: fifth + 1 })) rest.push(event.seq);
      expect(rest).toEqual(events.slice(5).map((e) => e.seq));
      expect((await client.readEvents(runId, { fromSeq: fifth + 1 })).map((e) => e.seq)).toEqual(rest);
      expect(await consumerCount(STREAMS.runs)).toBeLessThanOrEqual(consumersBefore);
    } finally {
      await client.close();
    }
  });

  it('the CLI, as the client user, gets, watches and diffs runs', async () => {
    const cli = async (...args: string[]) => {
      const proc = spawnTsEntry({
        name: 'dura-cli',
        entry: 'services/cli/src/main.ts',
        args: [...args, '--nats', nats.url, '--api', apiUrl, '--nats-user', 'client'],
        env: { ...envOf('client'), DURA_API_TOKEN: TOKENS.a },
      });
      const exit = await proc.exited;
      return { code: exit.code, output: proc.output() };
    };
    const get = await cli('get', 'hostile-sdk-run');
    expect(get.output).toMatch(/completed/);
    expect(get.code).toBe(0);
    const watch = await cli('watch', 'hostile-sdk-run', '--from', '3');
    expect(watch.output).toMatch(/run_completed/);
    expect(watch.output).not.toMatch(/run_requested/);
    expect(watch.code).toBe(0);
    const diff = await cli('diff', 'hostile-sdk-run', 'hostile-sdk-run');
    expect(diff.output).not.toMatch(/Permissions Violation|denied/i);
    expect(diff.code).toBe(0);
  });
});

describe('the client credential cannot create, use or delete consumers', () => {
  it('a push consumer on DURA_RUNS delivering into another stream is denied, and nothing lands there', async () => {
    const nc = await as('client');
    const jsm = await jetstreamManager(nc);
    const watched = [STREAMS.requests, STREAMS.tasks, STREAMS.deadLetters];
    const before = await Promise.all(watched.map((s) => admin.streams.info(s)));
    const consumersBefore = (await admin.consumers.list(STREAMS.runs).next()).map((c) => c.name);
    for (const deliver of [
      SUBJECTS.submit,
      SUBJECTS.fork,
      'dura.task.tool.x',
      'dura.task.decide',
      'dura.dlq.x',
    ])
      await denied(
        jsm.consumers.add(STREAMS.runs, {
          deliver_subject: deliver,
          deliver_policy: DeliverPolicy.All,
          ack_policy: AckPolicy.None,
        }),
      );
    // The same requests by hand, on every create subject a 2.9 or 2.10 server answers.
    const push = (name: string) =>
      JSON.stringify({
        stream_name: STREAMS.runs,
        config: { name, durable_name: name, deliver_subject: SUBJECTS.submit, ack_policy: 'none' },
      });
    for (const subject of [
      `$JS.API.CONSUMER.CREATE.${STREAMS.runs}`,
      `$JS.API.CONSUMER.CREATE.${STREAMS.runs}.snoop`,
      `$JS.API.CONSUMER.CREATE.${STREAMS.runs}.snoop.dura.run.hostile-sdk-run`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${STREAMS.runs}.snoop`,
    ])
      await denied(nc.request(subject, push('snoop'), { timeout: 5000 }));
    // No consumer came into being, so nothing could be delivered: every watched stream is as it was.
    const consumersAfter = (await admin.consumers.list(STREAMS.runs).next()).map((c) => c.name);
    expect(consumersAfter.sort()).toEqual(consumersBefore.sort());
    const after = await Promise.all(watched.map((s) => admin.streams.info(s)));
    for (const [i, info] of after.entries()) {
      expect(info.state.last_seq, info.config.name).toBe(before[i]!.state.last_seq);
      expect(info.state.messages, info.config.name).toBe(before[i]!.state.messages);
    }
  });

  it('durable and ordered consumers, consumer info, listing and deletion are all denied', async () => {
    const nc = await as('client');
    const jsm = await jetstreamManager(nc);
    const [projectorConsumer] = await admin.consumers.list(STREAMS.runs).next();
    expect(projectorConsumer, 'the projector follows the run log with a consumer').toBeDefined();
    await denied(jsm.consumers.add(STREAMS.runs, { durable_name: 'snoop', ack_policy: AckPolicy.None }));
    await denied(
      jsm.consumers.add(STREAMS.requests, { durable_name: 'snoop', ack_policy: AckPolicy.Explicit }),
    );
    await denied(
      jetstream(nc).consumers.get(STREAMS.runs, { filter_subjects: runSubject('hostile-sdk-run') }),
    );
    await denied(jsm.consumers.info(STREAMS.runs, projectorConsumer!.name));
    await denied(jsm.consumers.list(STREAMS.runs).next());
    await denied(jsm.consumers.delete(STREAMS.runs, projectorConsumer!.name));
    expect((await admin.consumers.info(STREAMS.runs, projectorConsumer!.name)).name).toBe(
      projectorConsumer!.name,
    );
  });

  it('every Dura stream limits its consumers', async () => {
    const limits = {
      [STREAMS.requests]: MAX_CONSUMERS.requests,
      [STREAMS.runs]: MAX_CONSUMERS.runs,
      [STREAMS.tasks]: MAX_CONSUMERS.tasks,
      [STREAMS.deadLetters]: MAX_CONSUMERS.deadLetters,
      [STREAMS.tokens]: MAX_CONSUMERS.tokens,
    };
    for (const [stream, limit] of Object.entries(limits))
      expect((await admin.streams.info(stream)).config.max_consumers, stream).toBe(limit);
  });
});

describe('live run streams (SSE) are bounded', () => {
  it(`a credential may hold ${PER_TOKEN} streams open; the next answers 429 with what to do, others are not affected`, async () => {
    const runId = 'hostile-sse-waiting';
    await submitWaitingRun(runId);
    const open = [];
    for (let i = 0; i < PER_TOKEN; i += 1) {
      const stream = await openStream(apiUrl, runId, TOKENS.a);
      expect(stream.status).toBe(200);
      open.push(stream);
    }
    const refused = await openStream(apiUrl, runId, TOKENS.a);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('5');
    expect(refused.error).toMatchObject({
      error: { code: 'too_many_streams', message: expect.stringMatching(/close one.*retry/) },
    });
    const other = await openStream(apiUrl, runId, TOKENS.b);
    expect(other.status).toBe(200);
    other.close();
    open.pop()?.close();
    // The slot comes back once the server sees the connection close.
    const again = await eventually(
      async () => {
        const stream = await openStream(apiUrl, runId, TOKENS.a);
        if (stream.status === 200) return stream;
        stream.close();
        return undefined;
      },
      'a slot to free up after a stream closed',
      10_000,
    );
    again.close();
    for (const stream of open) stream.close();
  });

  it('a live stream delivers what happens after it opened, then ends, with the projector under its shipped permissions', async () => {
    const runId = 'hostile-sse-live';
    await submitWaitingRun(runId);
    const stream = await openStream(apiUrl, runId, TOKENS.b);
    expect(stream.status).toBe(200);
    const reading = stream.eventsUntilEnd();
    const client = connectDuraClient({ natsUrl: nats.url, security: securityOf('client') });
    try {
      await client.signal(runId, 'never', { payload: { ok: true } });
    } finally {
      await client.close();
    }
    const events = await reading;
    expect(events).toEqual(expect.arrayContaining(['wait_requested', 'signal_received', 'run_completed']));
    expect(events.at(-1)).toBe('end');
    for (const proc of processes) expect(proc.output()).not.toMatch(/Permissions Violation|NATS denied/);
  });

  it('after 200 open/close cycles the run log holds as many consumers as before, within 10 s', async () => {
    const runId = 'hostile-sse-cycles';
    const firstSeq = await submitWaitingRun(runId);
    const start = await consumerCount(STREAMS.runs);
    let peak = start;
    let refusals = 0;
    for (let cycle = 0; cycle < 200; cycle += 1) {
      // A slot freed by the previous close may not be back yet: such a refusal is counted and retried.
      const stream = await eventually(
        async () => {
          const s = await openStream(apiUrl, runId, TOKENS.cycler);
          if (s.status === 200) return s;
          refusals += 1;
          return undefined;
        },
        `stream ${cycle} to open`,
        10_000,
      );
      expect(await stream.firstEventId()).toBe(String(firstSeq));
      stream.close();
      if (cycle % 20 === 19) peak = Math.max(peak, await consumerCount(STREAMS.runs));
    }
    let last = start;
    // The figure is reported whether or not it comes back in time.
    const settled = await eventually(
      async () => {
        last = await consumerCount(STREAMS.runs);
        return last <= start + 3 ? last : undefined;
      },
      'the consumer count to come back to its start',
      10_000,
    ).catch(() => last);
    console.log(
      `SSE cycles: DURA_RUNS consumers start ${start}, peak ${peak}, after ${settled}; 429 retries ${refusals}`,
    );
    expect(settled).toBeLessThanOrEqual(start + 3);
  });
});

/** A run that waits for a signal after its first events, so its stream stays open; its first seq. */
async function submitWaitingRun(runId: string): Promise<number> {
  const client = connectDuraClient({ natsUrl: nats.url, security: securityOf('client') });
  try {
    await client.submitRun({
      runId,
      agent: { kind: 'scripted', steps: [{ tool: 'dura.wait_for_signal', args: { name: 'never' } }] },
    } as never);
    let first: number | undefined;
    for await (const event of client.watchRun(runId, { untilFinished: false })) {
      first ??= event.seq;
      if (event.type === 'wait_requested') break;
    }
    return first ?? 0;
  } finally {
    await client.close();
  }
}
