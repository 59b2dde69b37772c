// Event triggers in a planner against real NATS: what a message becomes (input, run id), and what happens to
// messages and triggers that are not acceptable.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { DeadLetterSchema, STREAMS, triggerRunId, type DeadLetter } from '@dura/contracts';
import { createTriggerStore } from '@dura/event-store';
import { useTestInfra } from '@dura/testing';
import { builtinRegistry } from '@dura/tools';
import { createScriptedModel } from '@dura/agents';
import { createPlanner, type Planner } from '../src/index';
import { STREAM_OPTIONS, connect, eventually, prepare, testLogger, type Connections } from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let setup: Connections;
let conn: Connections;
let planner: Planner;
const triggers = () => createTriggerStore({ js: setup.js });

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  conn = await connect(infra().nats.url, 'planner');
  planner = createPlanner({
    ...conn,
    model: createScriptedModel(),
    tools: builtinRegistry(),
    log: testLogger('planner'),
    streams: STREAM_OPTIONS,
    eventTriggers: { pollMs: 100 },
  });
  await planner.start();
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
      (await setup.jsm.consumers.info(STREAMS.events, 'trigger-inbox').catch(() => null)) ? true : undefined,
    'the trigger bound',
  );
});

afterAll(async () => {
  await planner?.stop();
  await conn?.close();
  await setup?.close();
});

async function requestOf(runId: string) {
  const events = await eventually(async () => {
    const found = await setup.store.read(runId);
    return found.length > 0 ? found : undefined;
  }, `run ${runId} in the log`);
  const first = events[0];
  if (first?.type !== 'run_requested') throw new Error(`run ${runId} starts with ${first?.type}`);
  return first.data.request;
}

async function deadLetters(): Promise<DeadLetter[]> {
  const info = await setup.jsm.streams.info(STREAMS.deadLetters).catch(() => null);
  const out: DeadLetter[] = [];
  for (
    let seq = info?.state.first_seq ?? 1;
    info && seq <= info.state.last_seq && info.state.messages > 0;
    seq += 1
  ) {
    const msg = await setup.jsm.streams.getMessage(STREAMS.deadLetters, { seq }).catch(() => null);
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
    await setup.js.publish('dura.event.inbox', JSON.stringify({ mail: 1 }), withId('mail-1'));
    const request = await requestOf('trg-inbox-mail-1');
    expect(request).toMatchObject({
      tenant: 'acme',
      input: { mail: 1 },
      metadata: { 'dura.trigger': 'inbox' },
    });
  });

  it('text that is not JSON: the text is the input', async () => {
    await setup.js.publish('dura.event.inbox', 'hello, not json', withId('text-1'));
    expect((await requestOf('trg-inbox-text-1')).input).toBe('hello, not json');
  });

  it('without a message id: the run id comes from its stream sequence', async () => {
    const ack = await setup.js.publish('dura.event.inbox', JSON.stringify({ mail: 2 }));
    expect((await requestOf(`trg-inbox-s${ack.seq}`)).input).toEqual({ mail: 2 });
  });

  it('with a message id outside the run-id alphabet: a stable hash of it', async () => {
    const runId = triggerRunId('inbox', 'order/42@shop.example');
    expect(runId).toMatch(/^trg-inbox-h[0-9a-f]{16}$/);
    expect(triggerRunId('inbox', 'order/42@shop.example')).toBe(runId);
    await setup.js.publish('dura.event.inbox', JSON.stringify({ mail: 3 }), withId('order/42@shop.example'));
    expect((await requestOf(runId)).input).toEqual({ mail: 3 });
  });

  it('too deep to be a request: dead-lettered with the reason, no run', async () => {
    const deep = '['.repeat(100) + ']'.repeat(100);
    await setup.js.publish('dura.event.inbox', deep, withId('deep-1'));
    const letter = await eventually(
      async () => (await deadLetters()).find((l) => l.source === 'events'),
      'the dead letter',
    );
    expect(letter.error.message).toMatch(/deep|depth/);
    expect(await setup.store.read('trg-inbox-deep-1')).toEqual([]);
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
