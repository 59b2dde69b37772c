// Event triggers in a planner against real NATS: what a message becomes (input, run id), and what happens to
// messages and triggers that are not acceptable.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { AckPolicy } from '@nats-io/jetstream';
import { DeadLetterSchema, STREAMS, triggerRunId, type DeadLetter } from '@dura/contracts';
import { createTriggerStore } from '@dura/event-store';
import { useTestInfra } from '@dura/testing';
import { randomBytes } from 'node:crypto';
import { BUILTIN_TOOLS, createSecretsBox, isSecretEnvelope, ToolRegistry } from '@dura/tools';
import { createEventSecrets } from '../src/event-secrets';
import { eventually, testLogger } from './support';
import { usePlanner } from './planner-harness';
import { secretCardTool } from '@dura/tools/testing';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const pay = secretCardTool();
const payPlan = {
  v: 1 as const,
  agent: { kind: 'scripted' as const, steps: [{ tool: 'pay', args: { amount: 1, card: '$input.card' } }] },
};
const env = usePlanner(infra, {
  tools: new ToolRegistry([...BUILTIN_TOOLS, pay]),
  secrets: createSecretsBox(`k1:${randomBytes(32).toString('base64')}`),
  eventTriggers: { pollMs: 100 },
});
const triggers = () => createTriggerStore({ js: env.setup.js });

beforeAll(async () => {
  await triggers().create(
    {
      id: 'inbox',
      tenant: 'acme',
      subject: 'dura.event.inbox',
      request: { v: 1, agent: { kind: 'scripted', steps: [] } },
    },
    Date.now(),
  );
  await eventually(
    async () =>
      (await env.setup.jsm.consumers.info(STREAMS.events, 'trigger-inbox').catch(() => null))
        ? true
        : undefined,
    'the trigger bound',
  );
});

async function requestOf(runId: string) {
  const events = await eventually(async () => {
    const found = await env.setup.store.read(runId);
    return found.length > 0 ? found : undefined;
  }, `run ${runId} in the log`);
  const first = events[0];
  if (first?.type !== 'run_requested') throw new Error(`run ${runId} starts with ${first?.type}`);
  return first.data.request;
}

async function deadLetters(): Promise<DeadLetter[]> {
  const info = await env.setup.jsm.streams.info(STREAMS.deadLetters).catch(() => null);
  const out: DeadLetter[] = [];
  for (
    let seq = info?.state.first_seq ?? 1;
    info && seq <= info.state.last_seq && info.state.messages > 0;
    seq += 1
  ) {
    const msg = await env.setup.jsm.streams.getMessage(STREAMS.deadLetters, { seq }).catch(() => null);
    if (msg) out.push(DeadLetterSchema.parse(msg.json()));
  }
  return out;
}

const withId = (id: string) => {
  const h = natsHeaders();
  h.set('Nats-Msg-Id', id);
  return { headers: h };
};

describe('a message on a trigger subject', () => {
  it('JSON: becomes the input of a run of the trigger tenant, its id from the Nats-Msg-Id', async () => {
    await env.setup.js.publish('dura.event.inbox', JSON.stringify({ mail: 1 }), withId('mail-1'));
    const request = await requestOf('trg-inbox-mail-1');
    expect(request).toMatchObject({
      tenant: 'acme',
      input: { mail: 1 },
      metadata: { 'dura.trigger': 'inbox' },
    });
  });

  it('text that is not JSON: the text is the input', async () => {
    await env.setup.js.publish('dura.event.inbox', 'hello, not json', withId('text-1'));
    expect((await requestOf('trg-inbox-text-1')).input).toBe('hello, not json');
  });

  it('without a message id: the run id comes from its stream sequence', async () => {
    const ack = await env.setup.js.publish('dura.event.inbox', JSON.stringify({ mail: 2 }));
    expect((await requestOf(`trg-inbox-s${ack.seq}`)).input).toEqual({ mail: 2 });
  });

  it('with a message id outside the run-id alphabet: a stable hash of it', async () => {
    const runId = triggerRunId('inbox', 'order/42@shop.example');
    expect(runId).toMatch(/^trg-inbox-h[0-9a-f]{16}$/);
    expect(triggerRunId('inbox', 'order/42@shop.example')).toBe(runId);
    await env.setup.js.publish(
      'dura.event.inbox',
      JSON.stringify({ mail: 3 }),
      withId('order/42@shop.example'),
    );
    expect((await requestOf(runId)).input).toEqual({ mail: 3 });
  });

  it('too deep to be a request: dead-lettered with the reason, no run', async () => {
    const deep = '['.repeat(100) + ']'.repeat(100);
    await env.setup.js.publish('dura.event.inbox', deep, withId('deep-1'));
    const letter = await eventually(
      async () => (await deadLetters()).find((l) => l.source === 'events'),
      'the dead letter',
    );
    expect(letter.error.message).toMatch(/deep|depth/);
    expect(await env.setup.store.read('trg-inbox-deep-1')).toEqual([]);
  });
});

describe('a trigger definition', () => {
  it('is refused outside dura.event., or with an id that cannot be part of a run id', async () => {
    await expect(
      triggers().create(
        {
          id: 'x',
          tenant: 'acme',
          subject: 'dura.submit',
          request: { v: 1, agent: { kind: 'agent', name: 'a' } },
        },
        0,
      ),
    ).rejects.toThrow(/under "dura\.event\."/);
    await expect(
      triggers().create(
        {
          id: 'a-b',
          tenant: 'acme',
          subject: 'dura.event.x',
          request: { v: 1, agent: { kind: 'agent', name: 'a' } },
        },
        0,
      ),
    ).rejects.toThrow(/only letters, digits and "_"/);
  });

  it('with the same id and another definition is refused; the same again is a no-op', async () => {
    const spec = {
      id: 'inbox',
      tenant: 'acme',
      subject: 'dura.event.inbox',
      request: { v: 1, agent: { kind: 'scripted', steps: [] } },
    };
    expect((await triggers().create(spec, Date.now())).created).toBe(false);
    await expect(triggers().create({ ...spec, tenant: 'globex' }, Date.now())).rejects.toThrow(
      /exists with another definition/,
    );
  });
});

describe('a deleted trigger', () => {
  it('starts no run for a message published once its delete has returned', async () => {
    const spec = {
      id: 'gone',
      tenant: 'acme',
      subject: 'dura.event.gone',
      request: { v: 1, agent: { kind: 'scripted', steps: [] } },
    };
    await triggers().create(spec, Date.now());
    const consumer = () => env.setup.jsm.consumers.info(STREAMS.events, 'trigger-gone').catch(() => null);
    await eventually(async () => ((await consumer()) ? true : undefined), 'the trigger bound');
    await env.setup.js.publish('dura.event.gone', JSON.stringify({ n: 1 }), withId('before-1'));
    expect((await requestOf('trg-gone-before-1')).input).toEqual({ n: 1 });
    // Every request a trigger publishes, seen as it goes to dura.submit.
    const submitted: string[] = [];
    const sub = env.setup.nc.subscribe('dura.submit', {
      callback: (_err, msg) => void submitted.push(msg.string()),
    });
    await env.setup.nc.flush();

    expect(await triggers().remove('gone')).toBe(true);
    await env.setup.js.publish('dura.event.gone', JSON.stringify({ n: 2 }), withId('after-1'));
    // The planner removes the consumer once it has seen the delete, after its handlers have finished.
    await eventually(async () => ((await consumer()) === null ? true : undefined), 'the consumer removed');
    await env.setup.nc.flush();
    sub.unsubscribe();
    expect(submitted.filter((body) => body.includes('trg-gone-after-1'))).toEqual([]);
    expect(await env.setup.store.read('trg-gone-after-1')).toEqual([]);
  });

  it('made again under its id, starts on messages published after it was made again, not before', async () => {
    const createdAt = Date.now();
    await triggers().create(
      {
        id: 'gone',
        tenant: 'acme',
        subject: 'dura.event.gone',
        request: { v: 1, agent: { kind: 'scripted', steps: [] } },
      },
      createdAt,
    );
    const info = await eventually(
      async () =>
        (await env.setup.jsm.consumers.info(STREAMS.events, 'trigger-gone').catch(() => null)) ?? undefined,
      'the trigger bound again',
    );
    expect(Date.parse(info.config.opt_start_time ?? '')).toBe(createdAt);
    await env.setup.js.publish('dura.event.gone', JSON.stringify({ n: 3 }), withId('again-1'));
    expect((await requestOf('trg-gone-again-1')).input).toEqual({ n: 3 });
    expect(await env.setup.store.read('trg-gone-after-1')).toEqual([]);
  });
});

describe("an event holding a secret the trigger's run takes", () => {
  async function bind(id: string, subject: string, request: object): Promise<void> {
    await triggers().create({ id, tenant: 'acme', subject, request: request as never }, Date.now());
    await eventually(
      async () =>
        (await env.setup.jsm.consumers.info(STREAMS.events, `trigger-${id}`).catch(() => null))
          ? true
          : undefined,
      `trigger ${id} bound`,
    );
  }
  const held = async (stream: string, needle: string): Promise<number[]> => {
    const { state } = await env.setup.jsm.streams.info(stream);
    const seqs: number[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq += 1) {
      const msg = await env.setup.jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (msg && new TextDecoder().decode(msg.data).includes(needle)) seqs.push(seq);
    }
    return seqs;
  };

  it('goes to dura.submit sealed, and is erased from DURA_EVENTS', async () => {
    await bind('cards', 'dura.event.cards', payPlan);
    const ack = await env.setup.js.publish(
      'dura.event.cards',
      JSON.stringify({ card: { token: 'tok_event_1' }, note: 'kept' }),
      withId('c-1'),
    );
    const input = (await requestOf('trg-cards-c-1')).input as { card: { token: unknown }; note: string };
    expect(isSecretEnvelope(input.card.token)).toBe(true);
    expect(input.note).toBe('kept');
    await eventually(
      async () =>
        (await env.setup.jsm.streams.getMessage(STREAMS.events, { seq: ack.seq }).catch(() => null)) === null
          ? true
          : undefined,
      'the event erased',
    );
    expect(await held(STREAMS.requests, 'tok_event_1')).toEqual([]);
  });

  it('is not erased before another trigger on its subject has read it', async () => {
    // Two triggers on one subject, their consumers made here (the planner binds only those in its bucket).
    const record = (id: string) => ({
      spec: { id, tenant: 'acme', subject: 'dura.event.manual', request: payPlan },
      createdAt: Date.now() - 1000,
    });
    for (const id of ['manual_a', 'manual_b'])
      await env.setup.jsm.consumers.add(STREAMS.events, {
        durable_name: `trigger-${id}`,
        filter_subject: 'dura.event.manual',
        ack_policy: AckPolicy.Explicit,
      });
    const erased: number[] = [];
    const errors: string[] = [];
    const log = { ...testLogger('secrets'), error: (message: string) => void errors.push(message) };
    const secrets = createEventSecrets({
      ports: {
        seal: (r) => r,
        redact: (b) => b,
        erase: (seq) => Promise.resolve(void erased.push(seq)),
      },
      jsm: env.setup.jsm,
      triggers: () => Promise.resolve([record('manual_a'), record('manual_b')]),
      consumerOf: (id) => `trigger-${id}`,
      log,
    });
    const ack = await env.setup.js.publish('dura.event.manual', JSON.stringify({ card: { token: 'tok_m' } }));
    const next = async (id: string) => {
      const msg = await (await env.setup.js.consumers.get(STREAMS.events, `trigger-${id}`)).next();
      if (!msg) throw new Error(`trigger ${id} got no event`);
      return msg;
    };
    const [a, b] = [await next('manual_a'), await next('manual_b')];
    await secrets.erase(a, record('manual_a'));
    expect(erased).toEqual([]);
    expect(errors.join('\n')).toMatch(new RegExp(`DURA_EVENTS #${ack.seq} .*not erased: triggers manual_b`));
    await b.ackAck();
    await secrets.erase(a, record('manual_a'));
    expect(erased).toEqual([ack.seq]);
    a.ack();
  });
});
