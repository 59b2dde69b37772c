// Issue acceptance (no secret at rest in clear): with the shipped NATS permissions (each service its own user,
// the client user submitting), card tokens reach the tool and are found nowhere a deployment keeps or emits
// bytes: not in any file of the nats-server's store directory (raw or base64), not in a pg_dump of the
// database, not in the services' logs (debug level), not in any exported span, not in the read API.
// One stack, two planners in turn: first the production default (inline plans off, registered agents only:
// a JSON scripted agent, a code agent, an event trigger, refused requests), then inline plans on (plans and
// inputs, a request requeued while its tenant is at its limit, refused requests and their dead letters).
import { randomBytes } from 'node:crypto';
import { jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectDuraClient } from '@dura/client';
import { STREAMS, SUBJECTS, type DeadLetter } from '@dura/contracts';
import { connectAs, securityOf } from './secured-nats';
import { SECRET_AGENTS, useSecretsStack } from './secrets-stack';
import { eventually, getJson } from './system';

const KEY = `k1:${randomBytes(32).toString('base64')}`;
// Random, so no fixture, default or earlier run can hold them by chance.
const token = (name: string) => `tok_${name}_${randomBytes(12).toString('hex')}`;

const stack = useSecretsStack(KEY);

const payPlan = (secret: string) => ({
  kind: 'scripted' as const,
  steps: [{ tool: 'pay.secret', args: { amount: 100, card: { token: secret } } }],
});
const payCard = { kind: 'agent' as const, name: 'pay-card' };
const secretCalls = () =>
  stack()
    .receiver.spans()
    .filter((s) => s.name === 'dura.tool.call pay.secret').length;
const letterOf = (letters: DeadLetter[], runId: string) => letters.find((l) => l.runId === runId);

async function authorizationsOf(runId: string): Promise<string[][]> {
  const events = await stack().client.readEvents(runId);
  const calls = events.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
  return calls.map((call) => stack().witness.authorizations(call.idempotencyKey));
}

describe('registered agents, inline plans off (the production default)', () => {
  const REGISTERED = {
    json: token('json'),
    code: token('code'),
    event: token('event'),
    denied: token('denied'),
    invalid: token('invalid'),
  };

  beforeAll(async () => {
    await stack().startPlanner({
      DURA_INLINE_PLANS: 'false',
      DURA_AGENTS: SECRET_AGENTS,
      // Explicit, so the test holds whatever the default grant becomes: globex may start nothing.
      PLANNER_TENANT_AGENTS: '*=*,globex=-',
    });
  }, 120_000);

  it('seals what they take as secret: no log, table, read API, dead letter or event holds a token', async () => {
    const s = stack();
    const calls = secretCalls();
    const admin = connectDuraClient({ natsUrl: s.nats.url, apiUrl: s.apiUrl, security: securityOf('admin') });
    try {
      await admin.eventTriggers.create({
        id: 'cards',
        tenant: 'acme',
        subject: 'dura.event.cards.>',
        request: { v: 1, agent: payCard },
      });
    } finally {
      await admin.close();
    }
    await eventually(
      () => Promise.resolve(/event trigger bound.*cards/.test(s.output('planner')) || undefined),
      'the trigger to be bound',
      30_000,
    );

    // A JSON scripted agent whose plan passes `$input.card` to pay.secret, whose `card.token` is secret.
    await s.client.submitRun({
      runId: 'reg-card',
      agent: payCard,
      input: { card: { token: REGISTERED.json }, note: 'not secret' },
    });
    // A code agent that declares `card.token` of its input secret.
    await s.client.submitRun({
      runId: 'reg-code',
      agent: { kind: 'agent', name: 'pay-code' },
      input: { amount: 300, card: { token: REGISTERED.code }, note: 'not secret' },
    });
    // An event the trigger makes a run of the JSON agent.
    await s.publishAsClient('dura.event.cards.paid', { card: { token: REGISTERED.event } }, 'ev-1');
    // Refused: a tenant that may not start the agent, and a request failing the schema.
    await s.client.submitRun({
      runId: 'reg-denied',
      tenant: 'globex',
      agent: payCard,
      input: { card: { token: REGISTERED.denied } },
    });
    await s.publishAsClient(
      SUBJECTS.submit,
      {
        v: 1,
        runId: 'reg-invalid',
        tenant: 42,
        agent: payCard,
        input: { card: { token: REGISTERED.invalid } },
      },
      'reg-invalid',
    );
    for (const runId of ['reg-denied', 'reg-invalid'])
      expect.soft(await s.endOf(runId), runId).toEqual(['run_rejected']);
    for (const runId of ['reg-card', 'reg-code', 'trg-cards-ev-1']) {
      const types = await s.endOf(runId);
      expect(types.at(-1), `${runId}: ${types.join(', ')}`).toBe('run_completed');
    }

    // The tool got the clear values (the witness saw them as the Authorization header).
    expect(await authorizationsOf('reg-card')).toEqual([[`Bearer ${REGISTERED.json}`]]);
    expect(await authorizationsOf('reg-code')).toEqual([[`Bearer ${REGISTERED.code}`]]);
    expect(await authorizationsOf('trg-cards-ev-1')).toEqual([[`Bearer ${REGISTERED.event}`]]);
    // The read API (any token that may read the run) gets the sealed form, once it has projected the runs to
    // their ends (the log can be ahead of it).
    for (const runId of ['reg-card', 'reg-code'])
      await eventually(
        async () => {
          const { status, body } = await getJson(`${s.apiUrl}/runs/${runId}`);
          return status === 200 && (body as { status?: string }).status === 'completed' ? true : undefined;
        },
        `the projection of ${runId} to reach its end`,
        30_000,
      );
    for (const path of ['/runs/reg-card', '/runs/reg-card/events', '/runs/reg-code/events']) {
      const text = await (await fetch(`${s.apiUrl}${path}`)).text();
      expect(text, path).not.toMatch(/tok_(json|code)_/);
      if (path.endsWith('/events')) expect(text, path).toContain('$secret');
    }
    // Each refusal is dead-lettered with the request redacted, and says why.
    const letters = await s.deadLetters();
    expect.soft(letterOf(letters, 'reg-denied')?.error.code).toBe('agent_not_allowed');
    expect.soft(letterOf(letters, 'reg-invalid')?.error.code).toBe('invalid_request');
    for (const runId of ['reg-denied', 'reg-invalid'])
      expect.soft(letterOf(letters, runId)?.payload, runId).toContain('[secret]');

    await s.receiver.waitForSpans(() => secretCalls() >= calls + 3, 30_000);
    const found = await s.search(REGISTERED);
    expect(found).toEqual(Object.fromEntries(Object.keys(REGISTERED).map((name) => [name, []])));
    // Every erase was allowed (DURA_REQUESTS and DURA_EVENTS): nothing was left behind with an error.
    expect(s.output('planner')).not.toMatch(/could not erase|not erased|Permissions Violation/);
  });

  it('a debounced POST /runs waits in its window (KV dura_run_gates) sealed: the card is nowhere in clear', async () => {
    const s = stack();
    const calls = secretCalls();
    const secret = token('debounced');
    const post = (n: number) =>
      fetch(`${s.apiUrl}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          agent: { kind: 'agent', name: 'pay-code' },
          input: { amount: 400 + n, card: { token: `${secret}_${n}` }, note: 'not secret' },
          debounce: { key: 'card-holder-7', windowMs: 1000 },
        }),
      });
    // Two requests: the window keeps the first, then the second in its place (two records in the bucket).
    const answers = [await post(1), await post(2)];
    const bodies = (await Promise.all(answers.map((a) => a.json()))) as Record<string, unknown>[];
    expect(answers.map((a) => a.status)).toEqual([202, 202]);
    expect(bodies.map((b) => b['outcome'])).toEqual(['debounced', 'debounced']);
    const runId = bodies[1]!['runId'] as string;
    const types = await s.endOf(runId);
    expect(types.at(-1), types.join(', ')).toBe('run_completed');
    // The tool got the last request's card in clear.
    expect(await authorizationsOf(runId)).toEqual([[`Bearer ${secret}_2`]]);

    await s.receiver.waitForSpans(() => secretCalls() >= calls + 1, 30_000);
    const found = await s.search({ first: `${secret}_1`, last: `${secret}_2` });
    expect(found).toEqual({ first: [], last: [] });
    expect(s.output('projector')).not.toMatch(/Permissions Violation/);
  });
});

describe('inline plans on: a card token under the shipped NATS permissions', () => {
  const INLINE = {
    plan: token('plan'),
    input: token('input'),
    refused: token('refused'),
    invalid: token('invalid'),
    conflict: token('conflict'),
    child: token('child'),
  };

  beforeAll(async () => {
    await stack().startPlanner({
      DURA_INLINE_PLANS: 'true',
      // One run in flight for tenant acme: a second one waits in dura.submit (requeued).
      PLANNER_TENANT_MAX_RUNS: 'acme=1',
      PLANNER_TENANT_LIMIT_POLICY: 'wait',
    });
  }, 120_000);

  it('reaches the tool and is at rest nowhere in clear: NATS store files, pg_dump, logs, spans', async () => {
    const s = stack();
    const { client } = s;
    const calls = secretCalls();
    // A run of tenant acme holds its only slot until it is signalled.
    await client.submitRun({
      runId: 'rest-holder',
      tenant: 'acme',
      agent: { kind: 'scripted', steps: [{ tool: 'dura.wait_for_signal', args: { name: 'go' } }] },
    });
    await eventually(
      async () =>
        (await client.readEvents('rest-holder')).some((e) => e.type === 'wait_requested') || undefined,
      'the holder run to wait for its signal',
      60_000,
    );
    // The paying run waits in dura.submit behind it: requeued, with its secrets in the plan and the input.
    await client.submitRun({
      runId: 'rest-card',
      tenant: 'acme',
      input: { card: { token: INLINE.input }, note: 'not secret' },
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'pay.secret', args: { amount: 100, card: { token: INLINE.plan } } },
          { tool: 'pay.secret', args: { amount: 200, card: '$input.card' } },
        ],
      },
    });
    await eventually(
      () => Promise.resolve(/message waits; requeued/.test(s.output('planner')) || undefined),
      'the paying run to be requeued while its tenant is at its limit',
      60_000,
    );

    // Refused requests holding secrets: a plan error, a schema error, a child run given a secret.
    await client.submitRun({
      runId: 'rest-refused',
      agent: {
        kind: 'scripted',
        steps: [...payPlan(INLINE.refused).steps, { tool: 'no.such.tool', args: {} }],
      },
    });
    await s.publishAsClient(
      SUBJECTS.submit,
      { v: 1, runId: 'rest-invalid', tenant: 42, agent: payPlan(INLINE.invalid) },
      'rest-invalid',
    );
    await client.submitRun({
      runId: 'rest-child',
      agent: {
        kind: 'scripted',
        steps: [{ tool: 'dura.run_agent', args: { agent: payPlan(INLINE.child) } }],
      },
    });
    // Soft: a refusal that went wrong is reported, and the search below still runs and says where secrets are.
    for (const runId of ['rest-refused', 'rest-invalid', 'rest-child'])
      expect.soft(await s.endOf(runId), runId).toEqual(['run_rejected']);

    await client.signal('rest-holder', 'go', { payload: {} });
    expect((await s.endOf('rest-holder')).at(-1)).toBe('run_completed');
    const types = await s.endOf('rest-card');
    expect(types.at(-1), types.join(', ')).toBe('run_completed');

    // The tool got the clear values (the witness saw them as the Authorization header).
    expect(await authorizationsOf('rest-card')).toEqual([
      [`Bearer ${INLINE.plan}`],
      [`Bearer ${INLINE.input}`],
    ]);
    // The same run id again, with another card: refused as a conflict (under its own msg-id, so JetStream
    // does not drop it as a duplicate).
    await s.publishAsClient(
      SUBJECTS.submit,
      { v: 1, runId: 'rest-card', agent: payPlan(INLINE.conflict) },
      'rest-card-again',
    );
    const conflict = await eventually(
      async () => (await s.deadLetters()).find((l) => l.error.code === 'run_id_conflict'),
      'the conflicting request to be dead-lettered',
      60_000,
    );
    expect.soft(conflict.payload).toContain('[secret]');
    // Each refusal is dead-lettered with the request redacted, and says why.
    const letters = await s.deadLetters();
    expect.soft(letterOf(letters, 'rest-refused')?.error.code).toBe('unknown_tool');
    expect.soft(letterOf(letters, 'rest-invalid')?.error.code).toBe('invalid_request');
    expect.soft(letterOf(letters, 'rest-child')?.error.code).toBe('secret_in_child_plan');
    for (const runId of ['rest-refused', 'rest-invalid', 'rest-child'])
      expect.soft(letterOf(letters, runId)?.payload, runId).toContain('[secret]');

    // Every span of both calls is exported before anything is searched.
    await s.receiver.waitForSpans(() => secretCalls() >= calls + 2, 30_000);
    const found = await s.search(INLINE);
    expect(found).toEqual(Object.fromEntries(Object.keys(INLINE).map((name) => [name, []])));
    expect(s.output('planner')).toMatch(/run_requested|planner started/);
    // Every erase was allowed: nothing was left behind with an error.
    expect(s.output('planner')).not.toMatch(/could not erase|Permissions Violation/);
  });
});

describe("the planner's NATS user", () => {
  it('may erase messages of DURA_REQUESTS and DURA_EVENTS and delete nothing else', async () => {
    const nc = await connectAs(stack().nats.url, 'planner');
    try {
      const jsm = await jetstreamManager(nc);
      const NONE = 999_999_999;
      // Allowed: the server itself answers (no such message), where a denied request gets a permissions violation.
      for (const stream of [STREAMS.requests, STREAMS.events]) {
        const allowed = await jsm.streams.deleteMessage(stream, NONE, true).catch((e: Error) => e);
        expect(allowed, stream).toBeInstanceOf(JetStreamApiError);
        expect(String(allowed), stream).not.toMatch(/Permissions Violation/);
      }
      const others = [
        STREAMS.runs,
        STREAMS.tasks,
        STREAMS.deadLetters,
        'KV_dura_snapshots',
        'KV_dura_triggers',
        'OBJ_dura_payloads',
      ];
      for (const stream of others) {
        const denied = await jsm.streams.deleteMessage(stream, 1, true).catch((e: Error) => e);
        expect(`${String(denied)} ${String((denied as Error).cause)}`, stream).toMatch(
          /Permissions Violation/,
        );
      }
      for (const stream of [STREAMS.requests, STREAMS.events]) {
        const purge = await jsm.streams.purge(stream).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(`${purge?.message} ${String(purge?.cause)}`, stream).toMatch(/Permissions Violation/);
      }
    } finally {
      await nc.close();
    }
  });
});
