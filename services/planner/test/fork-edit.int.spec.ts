// Forks with an edit through a real planner on its own nats-server: what the fork's log records, what the
// planner decides from the edited value, and how a refused edit is reported (never keeping the edited value).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DeadLetterSchema,
  FORK_VERSION,
  FORK_WITH_EDIT_VERSION,
  STREAMS,
  SUBJECTS,
  type JsonValue,
  type NewEvent,
  type RunEvent,
  type ScriptedStep,
} from '@dura/contracts';
import { fold, jsonHash } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { builtinRegistry } from '@dura/tools';
import { createScriptedModel } from '@dura/agents';
import { scriptedRequest, simulateRun } from '@dura/agents/testing';
import { createPlanner, type Planner } from '../src/index';
import {
  STREAM_OPTIONS,
  connect,
  eventually,
  prepare,
  storedMessages,
  testLogger,
  typesOf,
  type Connections,
} from './support';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
let setup: Connections;
let conn: Connections;
let planner: Planner | undefined;

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  conn = await connect(infra().nats.url, 'planner');
  planner = createPlanner({
    ...conn,
    model: createScriptedModel(),
    tools: builtinRegistry(),
    log: testLogger('planner'),
    streams: STREAM_OPTIONS,
  });
  await planner.start();
});

afterAll(async () => {
  await planner?.stop();
  await conn?.close();
  await setup?.close();
});

/** Quote (echo of a price), then pay what the quote said: step 2 reads step 1's result. */
const STEPS: ScriptedStep[] = [
  { tool: 'echo', args: { price: '$input.price' } },
  { tool: 'echo', args: { paid: '$steps.1.price' } },
];

/** A completed source run of STEPS with input `{ price: 100 }`, written to the log. */
async function completedSource(runId: string): Promise<RunEvent[]> {
  const request = { ...scriptedRequest(runId, STEPS), input: { price: 100 } };
  const results: JsonValue[] = [{ price: 100 }, { paid: 100 }];
  const { events } = await simulateRun(request, createScriptedModel(), {
    result: (step) => results[step - 1]!,
  });
  const fresh: NewEvent[] = events.map(({ seq: _seq, ...event }) => event);
  await setup.store.append(runId, fresh, { expectedSeq: 0 });
  return setup.store.read(runId);
}

const requestFork = (body: object, msgID: string) =>
  setup.js.publish(SUBJECTS.fork, JSON.stringify(body), { msgID });

const intentOf = (log: RunEvent[], step: number) =>
  log.find((e) => e.type === 'tool_call_requested' && e.data.step === step);

async function untilStep(runId: string, step: number): Promise<RunEvent[]> {
  return eventually(async () => {
    const log = await setup.store.read(runId);
    return intentOf(log, step) ? log : undefined;
  }, `fork ${runId} to request step ${step}`);
}

describe('a fork with an edited tool result', () => {
  it('continues from the edited value, records who edited what, and keeps the edited call completed', async () => {
    const source = await completedSource('edit-src-1');
    const observed = source.find((e) => e.type === 'tool_call_completed' && e.data.callId === 'call-1')!;
    await requestFork(
      {
        v: FORK_WITH_EDIT_VERSION,
        sourceRunId: 'edit-src-1',
        atSeq: observed.seq,
        runId: 'edit-new-1',
        edit: { toolResult: { callId: 'call-1', output: { price: 90 } }, by: 'alice' },
      },
      'fe-1',
    );
    const log = await untilStep('edit-new-1', 2);
    const step2 = intentOf(log, 2);
    expect(step2?.type === 'tool_call_requested' && step2.data.args).toEqual({ paid: 90 });
    const original = jsonHash({ price: 100 });
    expect(log[0]).toMatchObject({
      data: {
        forkOf: {
          runId: 'edit-src-1',
          atSeq: observed.seq,
          edited: {
            by: 'alice',
            toolResult: { callId: 'call-1', sourceSeq: observed.seq, originalSha256: original },
          },
        },
      },
    });
    const copy = log.find((e) => e.type === 'tool_call_completed');
    expect(copy?.data).toEqual({
      ...observed.data,
      result: { price: 90 },
      edited: { by: 'alice', sourceRunId: 'edit-src-1', sourceSeq: observed.seq, originalSha256: original },
    });
    // The edited call is done, under its source key: nothing will dispatch it again.
    const call1 = fold(log).calls.find((c) => c.callId === 'call-1');
    expect(call1).toMatchObject({ status: 'completed', result: { price: 90 } });
    expect(log.filter((e) => e.type === 'tool_call_requested' && e.data.callId === 'call-1')).toHaveLength(1);
    expect(typesOf(log.slice(log.indexOf(copy!) + 1))).toEqual(['thought', 'tool_call_requested']);
    expect(await setup.store.read('edit-src-1')).toEqual(source);
  });
});

describe('a fork with an edited input', () => {
  it('at the run request, starts from the edited input', async () => {
    const source = await completedSource('edit-src-2');
    await requestFork(
      {
        v: FORK_WITH_EDIT_VERSION,
        sourceRunId: 'edit-src-2',
        atSeq: source[0]!.seq,
        runId: 'edit-new-2',
        edit: { input: { price: 7 }, by: 'bob' },
      },
      'fe-2',
    );
    const log = await untilStep('edit-new-2', 1);
    const step1 = intentOf(log, 1);
    expect(step1?.type === 'tool_call_requested' && step1.data.args).toEqual({ price: 7 });
    expect(log[0]).toMatchObject({
      data: {
        request: { runId: 'edit-new-2', input: { price: 7 } },
        forkOf: { edited: { by: 'bob', input: { originalSha256: jsonHash({ price: 100 }) } } },
      },
    });
  });
});

describe('a refused edit', () => {
  it('is dead-lettered with the edited values hidden, and the new run id says why', async () => {
    const source = await completedSource('edit-src-3');
    const before = (await storedMessages(setup.jsm, STREAMS.deadLetters, 'dura.dlq.forks')).length;
    const at = source.find((e) => e.type === 'tool_call_completed')!.seq;
    const edit = (callId: string) => ({ toolResult: { callId, output: { price: 'tok_secret' } }, by: 'eve' });
    await requestFork(
      {
        v: FORK_WITH_EDIT_VERSION,
        sourceRunId: 'edit-src-3',
        atSeq: at,
        runId: 'edit-bad-1',
        edit: edit('call-9'),
      },
      'fe-3a',
    );
    await requestFork(
      { v: FORK_VERSION, sourceRunId: 'edit-src-3', atSeq: at, runId: 'edit-bad-2', edit: edit('call-1') },
      'fe-3b',
    );
    await requestFork(
      {
        v: FORK_WITH_EDIT_VERSION,
        sourceRunId: 'edit-src-3',
        atSeq: at,
        runId: 'edit-bad-3',
        edit: { input: { price: 1 }, by: 'eve' },
      },
      'fe-3c',
    );
    const letters = await eventually(async () => {
      const found = await storedMessages(setup.jsm, STREAMS.deadLetters, 'dura.dlq.forks');
      return found.length >= before + 3 ? found.slice(before) : undefined;
    }, 'three dead letters on dura.dlq.forks');
    const byRun = new Map(
      letters.map((msg) => {
        const letter = DeadLetterSchema.parse(msg.json());
        return [letter.runId, { letter, text: msg.string() }];
      }),
    );
    expect(byRun.get('edit-bad-1')?.letter.error).toMatchObject({ code: 'fork_edit_invalid' });
    expect(byRun.get('edit-bad-1')?.letter.error.message).toContain('has no call "call-9"');
    expect(byRun.get('edit-bad-2')?.letter).toMatchObject({
      error: { code: 'invalid_request' },
      issues: [expect.stringContaining('a fork request with an edit is version 2')],
    });
    expect(byRun.get('edit-bad-3')?.letter.error.message).toContain("only before the run's first decision");
    for (const { text } of byRun.values()) expect(text).not.toContain('tok_secret');
    for (const runId of ['edit-bad-1', 'edit-bad-2', 'edit-bad-3']) {
      const log = await setup.store.read(runId);
      expect(typesOf(log), runId).toEqual(['run_rejected']);
    }
    // The refused requests are erased from dura.fork: the edited values are nowhere but hidden in dead letters.
    const kept = await storedMessages(setup.jsm, STREAMS.requests, SUBJECTS.fork);
    expect(kept.map((msg) => msg.string()).join('\n')).not.toContain('tok_secret');
  });
});
