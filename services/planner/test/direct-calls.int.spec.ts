// Direct calls, the planner's side: a drive hands each call straight to a gateway and goes on from its
// answer; whatever is not answered `done` goes out as a tool task. A scripted responder on the real server
// stands in for the gateway (its own side is services/tool-gateway/test/direct-calls.int.spec.ts).
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { headers as natsHeaders, type Msg, type Subscription } from '@nats-io/nats-core';
import {
  DIRECT_CALL_HEADERS,
  DIRECT_CALL_QUEUE,
  STREAMS,
  SUBJECTS,
  ToolTaskSchema,
  type ScriptedStep,
  type ToolTask,
} from '@dura/contracts';
import { idempotencyKey } from '@dura/core';
import { createScriptedModel } from '@dura/agents';
import { defineTool, ToolRegistry } from '@dura/tools';
import { useTestInfra } from '@dura/testing';
import { createRunDriver, type RunDriver } from '../src/index';
import { createDirectCalls } from '../src/direct-calls';
import { scriptedRequest } from './run-history';
import { appendRequest, storedMessages, testEvent, testLogger, typesOf } from './support';
import { usePlannerConnections } from './planner-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const env = usePlannerConnections(infra);
const SILENCE_MS = 400;
let driver: RunDriver;

const echo = defineTool({
  name: 'echo',
  description: 'returns its arguments',
  input: z.object({ n: z.number().int() }),
  safety: 'read_only',
  execute: (args) => Promise.resolve(args),
});
const limited = defineTool({
  name: 'limited',
  description: 'one call at a time across replicas',
  input: z.object({ n: z.number().int() }),
  safety: 'idempotent',
  concurrency: 1,
  execute: (args) => Promise.resolve(args),
});

beforeAll(() => {
  driver = createRunDriver({
    store: env.conn.store,
    js: env.conn.js,
    model: createScriptedModel(),
    log: testLogger('planner'),
    clock: () => new Date(),
    localTools: createDirectCalls({
      nc: env.conn.nc,
      js: env.conn.js,
      tools: new ToolRegistry([echo, limited]),
      log: testLogger('direct-calls'),
      silenceMs: SILENCE_MS,
    }),
  });
});

type Behaviour = (task: ToolTask, msg: Msg) => void | Promise<void>;
let responder: Subscription | undefined;
const asked: ToolTask[] = [];

/** A stand-in gateway in the gateways' queue group, answering each direct call as `behave` says. */
function gateway(behave: Behaviour): void {
  responder = env.setup.nc.subscribe(SUBJECTS.allDirectCalls, {
    queue: DIRECT_CALL_QUEUE,
    callback: (_err, msg) => {
      const task = ToolTaskSchema.parse(msg.json());
      asked.push(task);
      void Promise.resolve(behave(task, msg));
    },
  });
}

afterEach(() => {
  responder?.unsubscribe();
  responder = undefined;
  asked.length = 0;
});

function reply(
  msg: Msg,
  kind: string,
  set: Record<string, string> = {},
  body: Uint8Array = new Uint8Array(),
) {
  const headers = natsHeaders();
  headers.set(DIRECT_CALL_HEADERS.reply, kind);
  for (const [name, value] of Object.entries(set)) headers.set(name, value);
  msg.respond(body, { headers });
}

/** Does what a gateway does for a call it runs: appends the observation right behind `after`, answers with it. */
const completes: Behaviour = async (task, msg) => {
  const after = Number(msg.headers?.get(DIRECT_CALL_HEADERS.after));
  const observation = testEvent(
    task.runId,
    'tool_call_completed',
    {
      callId: task.callId,
      idempotencyKey: task.idempotencyKey,
      result: task.args,
      attempt: 1,
      deduped: false,
      durationMs: 1,
    },
    task.step,
  );
  const { lastSeq } = await env.setup.store.append(task.runId, [observation], { expectedSeq: after });
  const stored = await env.setup.jsm.streams.getMessage(STREAMS.runs, { seq: lastSeq });
  if (!stored) throw new Error(`no message at ${lastSeq}`);
  reply(msg, 'done', { [DIRECT_CALL_HEADERS.seq]: String(lastSeq) }, stored.data);
};

async function toolTasksOf(runId: string) {
  const messages = await storedMessages(env.setup.jsm, STREAMS.tasks, SUBJECTS.allToolTasks);
  return messages.map((msg) => ToolTaskSchema.parse(msg.json())).filter((task) => task.runId === runId);
}

async function decideTasks() {
  return storedMessages(env.setup.jsm, STREAMS.tasks, SUBJECTS.decideTask);
}

function start(runId: string, steps: ScriptedStep[]): Promise<number> {
  return appendRequest(env.setup.store, scriptedRequest(runId, steps));
}

describe('a drive with direct calls', () => {
  it('runs a whole run in one drive when a gateway answers each call: no tool task, no decide task', async () => {
    gateway(completes);
    const decidesBefore = (await decideTasks()).length;
    await start('direct-whole', [
      { tool: 'echo', args: { n: 1 } },
      { tool: 'echo', args: { n: 2 } },
    ]);
    const outcome = await driver.drive('direct-whole');

    expect(outcome).toMatchObject({ state: { status: 'completed' }, dispatched: 2 });
    expect(asked.map((task) => task.args)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await toolTasksOf('direct-whole')).toEqual([]);
    expect(await decideTasks()).toHaveLength(decidesBefore);
    const log = await env.setup.store.read('direct-whole');
    expect(typesOf(log).filter((type) => type.startsWith('tool_call'))).toEqual([
      'tool_call_requested',
      'tool_call_completed',
      'tool_call_requested',
      'tool_call_completed',
    ]);
  });

  it('sends a declined call as a tool task and ends the drive: the run waits for its observation', async () => {
    gateway((_task, msg) => reply(msg, 'declined', {}, new TextEncoder().encode('too busy')));
    await start('direct-declined', [{ tool: 'echo', args: { n: 3 } }]);
    const outcome = await driver.drive('direct-declined');

    expect(outcome).toMatchObject({ state: { status: 'running' }, dispatched: 1 });
    const [task, ...others] = await toolTasksOf('direct-declined');
    expect(others).toEqual([]);
    expect(task).toMatchObject({
      tool: 'echo',
      args: { n: 3 },
      idempotencyKey: idempotencyKey({ runId: 'direct-declined', step: 1, tool: 'echo', args: { n: 3 } }),
    });
  });

  it('sends a call as a tool task when its gateway goes silent past the silence limit', async () => {
    gateway(() => undefined);
    await start('direct-silent', [{ tool: 'echo', args: { n: 4 } }]);
    const began = performance.now();
    const outcome = await driver.drive('direct-silent');

    expect(performance.now() - began).toBeGreaterThanOrEqual(SILENCE_MS - 50);
    expect(outcome).toMatchObject({ state: { status: 'running' } });
    expect(asked).toHaveLength(1);
    expect(await toolTasksOf('direct-silent')).toHaveLength(1);
  });

  it('waits past the silence limit for a gateway that keeps saying it is working', async () => {
    gateway(async (task, msg) => {
      for (let i = 0; i < 4; i++) {
        await new Promise((resolve) => setTimeout(resolve, SILENCE_MS / 2));
        reply(msg, 'working');
      }
      await completes(task, msg);
    });
    await start('direct-working', [{ tool: 'echo', args: { n: 5 } }]);
    const outcome = await driver.drive('direct-working');

    expect(outcome).toMatchObject({ state: { status: 'completed' } });
    expect(await toolTasksOf('direct-working')).toEqual([]);
  });

  it('sends a tool task at once when no gateway listens, and one for a tool limited across replicas without asking', async () => {
    await start('direct-nobody', [{ tool: 'echo', args: { n: 6 } }]);
    const began = performance.now();
    expect(await driver.drive('direct-nobody')).toMatchObject({ state: { status: 'running' } });
    expect(performance.now() - began).toBeLessThan(SILENCE_MS);
    expect(await toolTasksOf('direct-nobody')).toHaveLength(1);

    gateway(completes);
    await start('direct-limited', [{ tool: 'limited', args: { n: 7 } }]);
    expect(await driver.drive('direct-limited')).toMatchObject({ state: { status: 'running' } });
    expect(asked).toEqual([]);
    expect(await toolTasksOf('direct-limited')).toHaveLength(1);
  });

  it('refuses a reply it cannot read, and sends the call as a tool task', async () => {
    gateway((_task, msg) => reply(msg, 'done', { [DIRECT_CALL_HEADERS.seq]: 'x' }));
    await start('direct-garbled', [{ tool: 'echo', args: { n: 8 } }]);
    expect(await driver.drive('direct-garbled')).toMatchObject({ state: { status: 'running' } });
    expect(await toolTasksOf('direct-garbled')).toHaveLength(1);
  });
});
