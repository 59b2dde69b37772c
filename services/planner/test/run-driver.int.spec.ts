import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  STREAMS,
  ToolTaskSchema,
  newEvent,
  type NewEvent,
  type RunEvent,
  type ScriptedStep,
  type ToolCall,
} from '@dura/contracts';
import { decisionEventId, idempotencyKey } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createRunDriver, type RunDriver } from '../src/index';
import { createScriptedModel } from '@dura/agents';
import { scriptedRequest, thoughtData } from './run-history';
import { countingStore } from './snapshot-support';
import {
  countingModel,
  storedMessages,
  testEvent,
  testLogger,
  typesOf,
  type CountingModel,
  appendRequest,
} from './support';
import { usePlannerConnections } from './planner-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const env = usePlannerConnections(infra);
let model: CountingModel;
let driver: RunDriver;

beforeAll(() => {
  model = countingModel(createScriptedModel());
  driver = createRunDriver({
    store: env.conn.store,
    js: env.conn.js,
    model,
    log: testLogger('planner'),
    clock: () => new Date(),
  });
});

/** Appends a run request the way intake does: first event of the run, id `<runId>@0.0`. */
function request(runId: string, steps: ScriptedStep[]): Promise<number> {
  return appendRequest(env.setup.store, scriptedRequest(runId, steps));
}

/** Appends `events` after the run's event at `lastSeq`, each guarded like a planner append. */
async function appendAfter(runId: string, lastSeq: number, events: NewEvent[]): Promise<void> {
  let expected = lastSeq;
  for (const event of events)
    expected = (await env.setup.store.append(runId, [event], { expectedSeq: expected })).lastSeq;
}

async function toolTasksFor(key: string) {
  const messages = await storedMessages(env.setup.jsm, STREAMS.tasks, 'dura.task.tool.>');
  return messages.filter((msg) => msg.header?.get('Nats-Msg-Id') === key);
}

describe('a run driven by createRunDriver', () => {
  const runId = 'run-driven';
  const key = idempotencyKey({ runId, step: 1, tool: 'echo', args: { n: 1 } });

  it('appends run_started, thought and the intent, then dispatches the tool task with msg-id = key', async () => {
    await request(runId, [{ tool: 'echo', args: { n: 1 } }]);
    const calls = model.calls;
    const outcome = await driver.drive(runId);
    expect(outcome).toMatchObject({ modelCalls: 1, dispatched: 1, state: { status: 'running', steps: 1 } });
    expect(model.calls - calls).toBe(1);

    const log = await env.setup.store.read(runId);
    expect(typesOf(log)).toEqual(['run_requested', 'run_started', 'thought', 'tool_call_requested']);
    // Every decision event is named after the sequence it was decided at, and caused by the event before it;
    // the model turn (thought and intent) is one append decided at the thought's predecessor, and the
    // intent is caused by its thought.
    for (const [i, event] of log.entries()) {
      if (i === 0) continue;
      const turnIndex = event.type === 'tool_call_requested' ? 1 : 0;
      expect(
        event.meta.id.startsWith(`${decisionEventId(runId, log[i - 1 - turnIndex]!.seq, turnIndex)}~`),
      ).toBe(true);
      expect(event.meta.causationId).toBe(log[i - 1]!.meta.id);
    }
    expect(log[3]!.seq).toBe(log[2]!.seq + 1);
    const intent = log[3] as Extract<RunEvent, { type: 'tool_call_requested' }>;
    expect(intent.data).toEqual({
      callId: 'call-1',
      step: 1,
      tool: 'echo',
      args: { n: 1 },
      idempotencyKey: key,
    });

    const [task, ...others] = await toolTasksFor(key);
    expect(others).toEqual([]);
    expect(task?.subject).toBe('dura.task.tool.echo');
    expect(ToolTaskSchema.parse(task?.json())).toEqual({
      v: 1,
      runId,
      callId: 'call-1',
      step: 1,
      tool: 'echo',
      args: { n: 1 },
      idempotencyKey: key,
      causationId: intent.meta.id,
      correlationId: runId,
    });
  });

  it('re-dispatches a pending call on the next drive without asking the model, deduped by the broker', async () => {
    const calls = model.calls;
    expect(await driver.drive(runId)).toMatchObject({ modelCalls: 0, dispatched: 1 });
    expect(model.calls).toBe(calls);
    expect(await toolTasksFor(key)).toHaveLength(1);
    expect(await env.setup.store.read(runId)).toHaveLength(4);
  });

  it('asks the model again only once the observation is in the log, and completes', async () => {
    const completed = testEvent(
      runId,
      'tool_call_completed',
      { callId: 'call-1', idempotencyKey: key, result: { n: 1 }, attempt: 1, deduped: false, durationMs: 1 },
      1,
    );
    await env.setup.store.append(runId, [completed], { expectedSeq: 'any' });
    expect(await driver.drive(runId)).toMatchObject({
      modelCalls: 1,
      dispatched: 0,
      state: { status: 'completed', output: { n: 1 } },
    });
    expect(typesOf(await env.setup.store.read(runId)).slice(-3)).toEqual([
      'tool_call_completed',
      'thought',
      'run_completed',
    ]);
    expect(await driver.drive(runId)).toMatchObject({ modelCalls: 0, dispatched: 0 });
  });
});

/** A driver of its own whose event store records every read it serves. */
function countingDriver() {
  const counting = countingStore(env.conn);
  const freshModel = countingModel(createScriptedModel());
  const fresh = createRunDriver({
    store: counting.store,
    js: env.conn.js,
    model: freshModel,
    log: testLogger('planner'),
    clock: () => new Date(),
    snapshots: false,
  });
  return { counting, fresh, model: freshModel };
}

describe('a run whose whole log this process has just written (the intake)', () => {
  it('is driven from what it wrote: its first drive reads nothing back and decides as a read would', async () => {
    const { counting, fresh } = countingDriver();
    const runId = 'drv-adopted';
    const event = newEvent(
      'run_requested',
      { request: scriptedRequest(runId, [{ tool: 'echo', args: { n: 1 } }]) },
      { id: decisionEventId(runId, 0, 0), runId, ts: new Date().toISOString(), correlationId: runId },
    );
    const [seq] = (await env.conn.store.append(runId, [event], { expectedSeq: 0 })).seqs as [number];

    fresh.adopt(runId, [{ ...event, seq }]);
    const outcome = await fresh.drive(runId, { afterSeq: seq, current: true });

    expect(counting.reads).toEqual([]);
    expect(outcome.dispatched).toBe(1);
    const log = await env.setup.store.read(runId);
    expect(typesOf(log)).toEqual(['run_requested', 'run_started', 'thought', 'tool_call_requested']);
    expect(outcome.state.lastSeq).toBe(log.at(-1)?.seq);
  });

  it('is read as usual by a drive that names a later event', async () => {
    const { counting, fresh } = countingDriver();
    const runId = 'drv-adopted-later';
    const seq = await request(runId, [{ tool: 'echo', args: { n: 2 } }]);
    const [first] = await env.setup.store.read(runId);
    fresh.adopt(runId, [first as RunEvent]);
    await appendAfter(runId, seq, [testEvent(runId, 'run_started', {}, 1)]);

    const outcome = await fresh.drive(runId, { afterSeq: seq + 1 });

    expect(counting.reads.length).toBeGreaterThan(0);
    expect(outcome.dispatched).toBe(1);
    expect(typesOf(await env.setup.store.read(runId))).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
    ]);
  });
});

describe('a decide task whose event the log has gone past (redelivered after another replica drove on)', () => {
  it('reads on past it and asks no model for the decision already recorded', async () => {
    const { counting, fresh, model: freshModel } = countingDriver();
    const runId = 'drv-task-behind';
    const key = idempotencyKey({ runId, step: 1, tool: 'echo', args: { n: 1 } });
    await request(runId, [
      { tool: 'echo', args: { n: 1 } },
      { tool: 'echo', args: { n: 2 } },
    ]);
    await driver.drive(runId);
    const completed = testEvent(
      runId,
      'tool_call_completed',
      { callId: 'call-1', idempotencyKey: key, result: { n: 1 }, attempt: 1, deduped: false, durationMs: 1 },
      1,
    );
    const observedAt = (await env.setup.store.append(runId, [completed], { expectedSeq: 'any' })).lastSeq;
    // This process holds the run folded as the observation left it: the model is to be asked next.
    await fresh.load(runId);
    // Another replica takes the observation's decide task meanwhile and records the next decision.
    expect(await driver.drive(runId, { afterSeq: observedAt })).toMatchObject({ modelCalls: 1 });
    const recorded = typesOf(await env.setup.store.read(runId));
    expect(recorded.slice(-3)).toEqual(['tool_call_completed', 'thought', 'tool_call_requested']);

    // The task comes again, to this process: its fold stops at the task's event, the log does not.
    const outcome = await fresh.drive(runId, { afterSeq: observedAt });

    expect(freshModel.calls).toBe(0);
    expect(outcome.modelCalls).toBe(0);
    expect(outcome.state.lastSeq).toBeGreaterThan(observedAt);
    expect(counting.reads.length).toBeGreaterThan(0);
    expect(typesOf(await env.setup.store.read(runId))).toEqual(recorded);
  });
});

describe('a decide task naming an event its log read does not reach', () => {
  it('is retried, not acked as done: nothing is decided on the short read', async () => {
    const runId = 'run-stale-read';
    const requestedAt = await request(runId, [{ tool: 'echo', args: { n: 2 } }]);
    const calls = model.calls;
    // What a stream leader elected a moment ago may answer: the log as it was before the task's event.
    await expect(driver.drive(runId, { afterSeq: requestedAt + 1 })).rejects.toMatchObject({
      code: 'log_read_behind',
      retryable: true,
      message: expect.stringMatching(/log read ended at seq \d+, before seq \d+ that the decide task names/),
    });
    expect(model.calls).toBe(calls);
    expect(typesOf(await env.setup.store.read(runId))).toEqual(['run_requested']);

    expect(await driver.drive(runId, { afterSeq: requestedAt })).toMatchObject({
      modelCalls: 1,
      dispatched: 1,
    });
    expect(typesOf(await env.setup.store.read(runId))).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
    ]);
  });
});

describe('resuming after a crash between a recorded decision and its follow-ups', () => {
  it('records the missing intent from the recorded thought, without calling the model', async () => {
    const runId = 'run-resume-intent';
    const requested = await request(runId, [{ tool: 'echo', args: { n: 7 } }]);
    const decision = {
      kind: 'tool_calls' as const,
      calls: [{ callId: 'call-1', tool: 'echo', args: { n: 7 } }],
    };
    await appendAfter(runId, requested, [
      testEvent(runId, 'run_started', {}, 1),
      testEvent(runId, 'thought', thoughtData(decision, 0), 2),
    ]);

    const calls = model.calls;
    const outcome = await driver.drive(runId);
    expect(model.calls).toBe(calls);
    expect(outcome).toMatchObject({ modelCalls: 0, dispatched: 1 });
    const log = await env.setup.store.read(runId);
    expect(typesOf(log)).toEqual(['run_requested', 'run_started', 'thought', 'tool_call_requested']);
    const key = idempotencyKey({ runId, step: 1, tool: 'echo', args: { n: 7 } });
    expect(log[3]?.data).toEqual({
      callId: 'call-1',
      step: 1,
      tool: 'echo',
      args: { n: 7 },
      idempotencyKey: key,
    });
    expect(await toolTasksFor(key)).toHaveLength(1);
  });

  it('records only the intents still missing from a multi-call decision', async () => {
    const runId = 'run-resume-partial';
    const requested = await request(runId, []);
    const calls: ToolCall[] = [
      { callId: 'call-1', tool: 'echo', args: { a: 1 } },
      { callId: 'call-2', tool: 'echo', args: { b: 2 } },
    ];
    const firstKey = idempotencyKey({ runId, step: 1, tool: 'echo', args: { a: 1 } });
    await appendAfter(runId, requested, [
      testEvent(runId, 'run_started', {}, 1),
      testEvent(runId, 'thought', thoughtData({ kind: 'tool_calls', calls }, 0), 2),
      testEvent(runId, 'tool_call_requested', { ...calls[0]!, step: 1, idempotencyKey: firstKey }, 3),
    ]);

    const before = model.calls;
    expect(await driver.drive(runId)).toMatchObject({ modelCalls: 0, dispatched: 2 });
    expect(model.calls).toBe(before);
    const intents = (await env.setup.store.read(runId)).filter((e) => e.type === 'tool_call_requested');
    expect(intents.map((e) => e.data)).toEqual([
      { callId: 'call-1', step: 1, tool: 'echo', args: { a: 1 }, idempotencyKey: firstKey },
      {
        callId: 'call-2',
        step: 2,
        tool: 'echo',
        args: { b: 2 },
        idempotencyKey: idempotencyKey({ runId, step: 2, tool: 'echo', args: { b: 2 } }),
      },
    ]);
  });

  it('appends the completion a recorded complete decision implies, without calling the model', async () => {
    const runId = 'run-resume-complete';
    const requested = await request(runId, []);
    await appendAfter(runId, requested, [
      testEvent(runId, 'run_started', {}, 1),
      testEvent(runId, 'thought', thoughtData({ kind: 'complete', output: 'done' }, 0), 2),
    ]);

    const before = model.calls;
    expect(await driver.drive(runId)).toMatchObject({
      modelCalls: 0,
      state: { status: 'completed', output: 'done' },
    });
    expect(model.calls).toBe(before);
    expect(typesOf(await env.setup.store.read(runId))).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'run_completed',
    ]);
  });
});
