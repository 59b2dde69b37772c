import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connectDuraClient } from '@dura/client';
import {
  DIRECT_CALL_QUEUE,
  directCallSubject,
  runSubject,
  STREAMS,
  SUBJECTS,
  tokensSubject,
  ToolTaskSchema,
  type DuraError,
} from '@dura/contracts';
import { fold } from '@dura/core';
import { createLiveTokens } from '@dura/event-store';
import { connectNats } from '@dura/service-kit';
import { freePort, spawnTsEntry, useTestInfra, type ManagedProcess } from '@dura/testing';
import { echoPlan, eventually, getJson, startService } from './system';
import { envOf, expectDenied, passwordOf, securityOf, useSecuredNats } from './secured-nats';

// Postgres from the shared helper; NATS is our own, started with the shipped permissions.
const infra = useTestInfra({ nats: false });
const { nats, as } = useSecuredNats();
let apiUrl: string;
const processes: ManagedProcess[] = [];

beforeAll(async () => {
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  const common = { NATS_URL: nats.url, DATABASE_URL: infra().db.url, PROJECTOR_HTTP_PORT: String(port) };
  processes.push(await startService('planner', { ...common, ...envOf('planner') }));
  processes.push(await startService('tool-gateway', { ...common, ...envOf('gateway') }));
  processes.push(await startService('projector', { ...common, ...envOf('projector') }));
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
});

/** The tool tasks in DURA_TASKS for `runId`, read as the admin. */
async function toolTasksOf(runId: string): Promise<unknown[]> {
  const jsm = await jetstreamManager(await as('admin'));
  const tasks: unknown[] = [];
  const { state } = await jsm.streams.info(STREAMS.tasks);
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const msg = await jsm.streams.getMessage(STREAMS.tasks, { seq }).catch(() => null);
    if (!msg?.subject.startsWith(SUBJECTS.toolTaskPrefix)) continue;
    const task = ToolTaskSchema.parse(msg.json());
    if (task.runId === runId) tasks.push(task);
  }
  return tasks;
}

/** The events of `runId`'s log, read as the admin. */
async function runEventsOf(runId: string): Promise<unknown[]> {
  const jsm = await jetstreamManager(await as('admin'));
  const msg = await jsm.streams.getMessage(STREAMS.runs, { last_by_subj: runSubject(runId) }).catch(() => null);
  return msg ? [msg.json()] : [];
}

describe('each service connects as its own least-privilege user', () => {
  it('runs a run end to end: a client user submits and watches, the projector serves it', async () => {
    const client = connectDuraClient({ natsUrl: nats.url, apiUrl, security: securityOf('client') });
    try {
      const runId = 'perm-e2e-run';
      expect(await client.submitRun(echoPlan(runId, 3) as never)).toEqual({ runId, duplicate: false });
      const types: string[] = [];
      for await (const event of client.watchRun(runId)) types.push(event.type);
      expect(types.at(-1)).toBe('run_completed');
      expect(types.filter((type) => type === 'tool_call_completed')).toHaveLength(3);
      // The planner handed each call straight to the gateway (dura.call.echo): none went out as a tool task.
      expect(await toolTasksOf(runId)).toEqual([]);
      const state = fold(await client.readEvents(runId));
      await eventually(
        async () => {
          const { status, body } = await getJson(`${apiUrl}/runs/${runId}`);
          return status === 200 && (body as { lastSeq: number }).lastSeq === state.lastSeq ? body : undefined;
        },
        'the projector (as user projector) to reach the end of the run',
        30_000,
      );
      // A cancel is a signal: allowed to the client user.
      await client.submitRun(echoPlan('perm-e2e-cancelled', 1) as never);
      expect((await client.cancel('perm-e2e-cancelled')).duplicate).toBe(false);
    } finally {
      await client.close();
    }
    for (const proc of processes) expect(proc.output()).not.toMatch(/NATS denied|Permissions Violation/);
  });
});

describe('the features that use more subjects work under the same users', () => {
  it('a timer, a signal wait, a child run and payloads over the object-store threshold', async () => {
    const client = connectDuraClient({ natsUrl: nats.url, apiUrl, security: securityOf('client') });
    try {
      const runId = 'perm-e2e-features';
      const big = 'x'.repeat(100_000);
      await client.submitRun({
        runId,
        agent: {
          kind: 'scripted',
          steps: [
            { tool: 'dura.sleep', args: { seconds: 1 } },
            { tool: 'dura.wait_for_signal', args: { name: 'go' } },
            {
              tool: 'dura.run_agent',
              args: { agent: { kind: 'scripted', steps: [{ tool: 'echo', args: { child: true } }] } },
            },
            { tool: 'echo', args: { big } },
          ],
        },
      } as never);
      await eventually(
        async () => {
          const events = await client.readEvents(runId);
          return events.some((e) => e.type === 'wait_requested' && e.data.kind === 'signal') || undefined;
        },
        'the signal wait (after the timer fired)',
        30_000,
      );
      await client.signal(runId, 'go', { payload: { ok: true } });
      const types: string[] = [];
      for await (const event of client.watchRun(runId)) types.push(event.type);
      expect(types.at(-1), types.join(', ')).toBe('run_completed');
      expect(types).toEqual(
        expect.arrayContaining(['timer_fired', 'signal_received', 'child_run_completed']),
      );
      const events = await client.readEvents(runId);
      expect(fold(events).status).toBe('completed');
      // The large arguments went through the object store: the planner wrote them, the gateway read them to run echo.
      const refs = events.flatMap((e) => {
        const data = e.data as { argsRef?: unknown; resultRef?: unknown };
        return [data.argsRef, data.resultRef].filter((ref) => ref !== undefined);
      });
      expect(refs.length).toBeGreaterThanOrEqual(1);
    } finally {
      await client.close();
    }
    for (const proc of processes) expect(proc.output()).not.toMatch(/NATS denied|Permissions Violation/);
  });
});

describe('triggers under the shipped users', () => {
  it('the admin creates a schedule and a trigger; the planner starts their runs; a client publishes the event', async () => {
    const admin = connectDuraClient({ natsUrl: nats.url, apiUrl, security: securityOf('admin') });
    try {
      await admin.schedules.create({
        id: 'perm_tick',
        tenant: 'acme',
        everyMs: 1000,
        request: { v: 1, agent: { kind: 'scripted', steps: [] } },
        overlap: 'allow_all',
      });
      const started = await eventually(
        async () => (await admin.schedules.runs('perm_tick'))[0],
        'a tick of the schedule started by the planner (as user planner)',
        30_000,
      );
      await admin.schedules.pause('perm_tick');
      await eventually(
        async () =>
          (await admin.getRun(started.runId).catch(() => null))?.status === 'completed' ? true : undefined,
        'the scheduled run completed',
        30_000,
      );
      await admin.eventTriggers.create({
        id: 'perm_events',
        tenant: 'acme',
        subject: 'dura.event.perm.>',
        request: { v: 1, agent: { kind: 'scripted', steps: [] } },
      });
      await processes[0]?.waitForOutput(/event trigger bound.*perm_events/, 30_000);
      const client = jetstream(await as('client'));
      await client.publish('dura.event.perm.hello', JSON.stringify({ hi: 1 }), { msgID: 'hello-1' });
      await eventually(
        async () =>
          (await admin.getRun('trg-perm_events-hello-1').catch(() => null))?.status === 'completed'
            ? true
            : undefined,
        'the event run completed',
        30_000,
      );
    } finally {
      await admin.close();
    }
    expect(processes[0]?.output()).not.toMatch(/NATS denied|Permissions Violation/);
  });

  it('the client may not write schedules or triggers', async () => {
    // The projector's HTTP door may write schedules and triggers for its callers: projector-write-door.e2e.spec.ts.
    const js = jetstream(await as('client'));
    await expectDenied(js.publish('$KV.dura_schedules.forged', '{}'));
    await expectDenied(js.publish('$KV.dura_triggers.forged', '{}'));
  });
});

describe('debounced POST /runs under the shipped users (dura.gate.runs)', () => {
  it('the projector hands the request to a planner, which keeps it in its window; the window starts the run', async () => {
    const response = await fetch(`${apiUrl}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        agent: echoPlan('unused', 1).agent,
        debounce: { key: 'perm-deb', windowMs: 200 },
      }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    expect([response.status, body['outcome']], JSON.stringify(body)).toEqual([202, 'debounced']);
    await eventually(
      async () => {
        const { status, body: run } = await getJson(`${apiUrl}/runs/${String(body['runId'])}`);
        return status === 200 && (run as { status: string }).status === 'completed' ? true : undefined;
      },
      'the run of the window completed',
      30_000,
    );
    for (const proc of processes) expect(proc.output()).not.toMatch(/NATS denied|Permissions Violation/);
  });

  it('only the projector may ask, only planners may take the asks, and a planner may answer nothing else', async () => {
    const ask = (user: 'client' | 'gateway') => async () =>
      (await as(user)).request(SUBJECTS.runGateAsk, '{}', { timeout: 5_000 });
    await expectDenied(ask('client')());
    await expectDenied(ask('gateway')());
    // Taking the asks would hand a user every debounced request in clear.
    for (const user of ['client', 'gateway', 'projector'] as const) {
      const sub = (await as(user)).subscribe(SUBJECTS.runGateAsk, { queue: 'dura-planners' });
      expect(String(await sub.closed), user).toMatch(
        /Permissions Violation for Subscription to "dura\.gate\.runs"/,
      );
    }
    // A planner answers on the reply subject it was asked on, and publishes into no other user's replies.
    const planner = await as('planner');
    await expectDenied(planner.request('_INBOX.projector.forged', '{}', { timeout: 5_000 }));
  });
});

describe('direct calls (dura.call.>) under the shipped users', () => {
  const task = {
    v: 1,
    runId: 'perm-forged-call',
    callId: 'call-1',
    step: 1,
    tool: 'echo',
    args: { n: 1 },
    idempotencyKey: 'perm-forged-call:1:echo:0',
    causationId: 'perm-forged-call@1',
    correlationId: 'perm-forged-call',
  };

  it('only planners may ask a gateway to run a call, only gateways may take the calls, and nobody answers for one', async () => {
    // Asking would run a tool with arguments no planner recorded.
    for (const user of ['client', 'projector', 'gateway', 'worker'] as const)
      await expectDenied(
        (await as(user)).request(directCallSubject('echo'), JSON.stringify(task), { timeout: 5_000 }),
      );
    // Taking them would hand a user every call's arguments, and let it answer with a result of its own.
    for (const user of ['client', 'projector', 'planner', 'worker'] as const) {
      const sub = (await as(user)).subscribe(SUBJECTS.allDirectCalls, { queue: DIRECT_CALL_QUEUE });
      expect(String(await sub.closed), user).toMatch(/Permissions Violation for Subscription to "dura\.call\.>"/);
    }
    // A gateway answers on the reply subject it was asked on, and publishes into no planner's replies unasked.
    const gateway = await as('gateway');
    await expectDenied(gateway.request('_INBOX.planner.forged', '{}', { timeout: 5_000 }));
    // None of it ran: the log of the forged call's run is empty.
    expect(await runEventsOf('perm-forged-call')).toEqual([]);
  });
});

describe('live model text (DURA_TOKENS) under the shipped users', () => {
  it('the planner publishes it; the client reads it by message get; the projector serves it', async () => {
    const lost: unknown[] = [];
    const live = createLiveTokens(jetstream(await as('planner')), 'perm-tokens', 0, {
      onLost: (_attempt, err) => lost.push(err),
    });
    live.delta(0, 'Hello from the planner user');
    await live.flush();
    expect(lost).toEqual([]);
    const client = connectDuraClient({ natsUrl: nats.url, apiUrl, security: securityOf('client') });
    const reading = new AbortController();
    const deltas: string[] = [];
    try {
      await client.followRunTokens(
        'perm-tokens',
        ({ event }) => {
          if (event.event !== 'token') return;
          deltas.push(event.data.delta);
          reading.abort();
        },
        { signal: reading.signal },
      );
    } finally {
      await client.close();
    }
    expect(deltas).toEqual(['Hello from the planner user']);
    // The projector (as user projector) reads both streams for GET /runs/:id/tokens: a finished run's feed ends.
    const response = await fetch(`${apiUrl}/runs/perm-e2e-run/tokens`);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/event: end\ndata: \{"status":"completed"\}/);
  });

  it('only the planner may publish it or change the stream', async () => {
    for (const user of ['gateway', 'projector', 'client'] as const) {
      const nc = await as(user);
      await expectDenied(jetstream(nc).publish(tokensSubject('perm-tokens'), '{}'));
      const jsm = await jetstreamManager(nc);
      const tokens = await jetstreamManager(await as('admin')).then((admin) =>
        admin.streams.info(STREAMS.tokens),
      );
      await expectDenied(jsm.streams.update(STREAMS.tokens, { ...tokens.config, max_age: 1_000_000_000 }));
      await expectDenied(jsm.streams.purge(STREAMS.tokens));
    }
  });
});

describe('what each user may not do is denied by the server', () => {
  // Permissions are checked on the subject before any content: the forged body does not matter.
  const thought = (runId: string) =>
    JSON.stringify({ type: 'thought', v: 1, data: { text: 'forged' }, meta: { runId } });

  it('the projector cannot publish a decision, a task or a KV write (its HTTP door: projector-write-door)', async () => {
    const js = jetstream(await as('projector'));
    await expectDenied(js.publish(runSubject('perm-e2e-run'), thought('perm-e2e-run')));
    await expectDenied(js.publish(SUBJECTS.decideTask, '{}'));
    await expectDenied(js.publish('$KV.dura_cancellations.perm-e2e-run', 'cancelled'));
  });

  it('a gateway cannot submit runs, dispatch tool tasks or timers, signal runs, or update streams', async () => {
    const nc = await as('gateway');
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await expectDenied(js.publish(SUBJECTS.submit, JSON.stringify(echoPlan('gateway-run', 1))));
    await expectDenied(js.publish(SUBJECTS.signal, '{}'));
    await expectDenied(js.publish(`${SUBJECTS.toolTaskPrefix}.echo`, '{}'));
    await expectDenied(js.publish(SUBJECTS.timerTask, '{}'));
    const runs = await jsm.streams.info(STREAMS.runs);
    await expectDenied(jsm.streams.update(STREAMS.runs, { ...runs.config, max_age: 1_000_000_000 }));
  });

  it('the client cannot append to a run, take tasks, or delete or purge a stream', async () => {
    const nc = await as('client');
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await expectDenied(js.publish(runSubject('perm-e2e-run'), thought('perm-e2e-run')));
    await expectDenied(js.publish(SUBJECTS.decideTask, '{}'));
    await expectDenied(jsm.streams.delete(STREAMS.runs));
    await expectDenied(jsm.streams.purge(STREAMS.requests));
    await expectDenied(jsm.consumers.add(STREAMS.tasks, { durable_name: 'snoop' }));
  });

  it('no service user may delete or purge a stream or delete a message; the admin may', async () => {
    for (const user of ['planner', 'gateway', 'worker', 'projector'] as const) {
      const jsm = await jetstreamManager(await as(user));
      await expectDenied(jsm.streams.purge(STREAMS.tasks));
      await expectDenied(jsm.streams.delete(STREAMS.deadLetters));
      await expectDenied(jsm.streams.deleteMessage(STREAMS.runs, 1));
    }
    const admin = await jetstreamManager(await as('admin'));
    await admin.streams.add({ name: 'SCRATCH', subjects: ['scratch.>'] });
    expect(await admin.streams.delete('SCRATCH')).toBe(true);
    // The runs are all still there.
    expect((await admin.streams.info(STREAMS.runs)).state.messages).toBeGreaterThan(0);
  });

  it("no user may read another's replies: subscribing outside its own inbox prefix is denied", async () => {
    const nc = await as('client');
    const sub = nc.subscribe('_INBOX.gateway.>');
    const ended = await sub.closed;
    expect(String(ended)).toMatch(/Permissions Violation for Subscription to "_INBOX.gateway.>"/);
    expect(String(await nc.subscribe('dura.task.>').closed)).toMatch(/Permissions Violation/);
  });
});

describe('dura dev against a secured NATS', () => {
  it('runs the demo with the credentials from the environment (one process: the admin user)', async () => {
    const proc = spawnTsEntry({
      name: 'dev',
      entry: 'services/dev/src/main.ts',
      args: ['--once'],
      env: { NATS_URL: nats.url, ...envOf('admin'), DATABASE_URL: undefined, PROJECTOR_HTTP_PORT: '0' },
    });
    const exit = await proc.exited;
    const output = proc.output();
    expect(exit.code, output.slice(-3000)).toBe(0);
    expect(output).toMatch(/run_completed/);
    expect(output).not.toContain(passwordOf('admin'));
  });
});

describe('failures say who and what to check', () => {
  it('a wrong password is rejected with the user named and the password nowhere', async () => {
    const security = { auth: { kind: 'user' as const, user: 'planner', password: 'not-the-password' } };
    const err = (await connectNats(nats.url, 'wrong', undefined, security).catch(
      (e: unknown) => e,
    )) as DuraError;
    expect(err.code).toBe('nats_auth_failed');
    expect(err.message).toMatch(
      /rejected user "planner".*Authorization Violation.*NATS_USER and NATS_PASSWORD/,
    );
    expect(err.message).not.toContain('not-the-password');
  });

  it('a service given a wrong password exits with that message, without printing the password', async () => {
    const proc = await startService('planner', {
      NATS_URL: nats.url,
      NATS_USER: 'planner',
      NATS_PASSWORD: 'wrong-password-7d1',
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(proc).toBeInstanceOf(Error);
    const message = (proc as Error).message;
    expect(message).toMatch(/rejected user \\?"planner\\?"/);
    expect(message).not.toContain('wrong-password-7d1');
    expect(message).not.toContain(passwordOf('planner'));
  });

  it('the CLI connects as the client user (--nats-user), and says why when the password is wrong', async () => {
    const cli = async (password: string) => {
      const proc = spawnTsEntry({
        name: 'dura-cli',
        entry: 'services/cli/src/main.ts',
        args: ['get', 'perm-e2e-run', '--nats', nats.url, '--api', apiUrl, '--nats-user', 'client'],
        env: { NATS_PASSWORD: password, NATS_INBOX_PREFIX: '_INBOX.client' },
      });
      const exit = await proc.exited;
      return { code: exit.code, output: proc.output() };
    };
    const ok = await cli(passwordOf('client'));
    expect(ok.output).toMatch(/completed/);
    expect(ok.code).toBe(0);
    const bad = await cli('nope-pw-42');
    expect(bad.output).toMatch(/rejected user "client" \(Authorization Violation\).*\[nats_auth_failed\]/);
    expect(bad.output).not.toContain('nope-pw-42');
    expect(bad.code).not.toBe(0);
  });

  it('a user connecting without its inbox prefix is told to set NATS_INBOX_PREFIX', async () => {
    const security = {
      auth: { kind: 'user' as const, user: 'projector', password: passwordOf('projector') },
    };
    const err = (await connectNats(nats.url, 'no-prefix', undefined, security).catch(
      (e: unknown) => e,
    )) as DuraError;
    expect(err.code).toBe('nats_permission_denied');
    expect(err.message).toMatch(/NATS denied user "projector" subscribing to "_INBOX\..*NATS_INBOX_PREFIX/);
  });
});
