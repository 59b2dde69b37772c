// Fork requests through a real planner on its own nats-server: the copied prefix, idempotence, open calls,
// refusals, and forks with an edit (what the log records, what the planner decides from the edited value, and
// how a refused edit is reported without keeping the edited value).
import { describe, expect, it, vi } from 'vitest';
import {
  DeadLetterSchema,
  FORK_VERSION,
  FORK_WITH_EDIT_VERSION,
  STREAMS,
  SUBJECTS,
  type DeadLetter,
  type JsonValue,
  type NewEvent,
  type RunEvent,
  type ScriptedStep,
} from '@dura/contracts';
import { fold, forkEventId, idempotencyKey, jsonHash, planFork } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createScriptedModel } from '@dura/agents';
import { chargeSteps, scriptedRequest, simulateRun } from '@dura/agents/testing';
import { eventually, storedMessages, typesOf, untilDeadLetters } from './support';
import { usePlanner } from './planner-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const env = usePlanner(infra);

/** Writes `events` (made in memory) to the run's log, as the services would have; returns them as stored. */
async function store(events: readonly RunEvent[]): Promise<RunEvent[]> {
  const runId = events[0]!.meta.runId;
  const fresh: NewEvent[] = events.map(({ seq: _seq, ...event }) => event);
  await env.setup.store.append(runId, fresh, { expectedSeq: 0 });
  return env.setup.store.read(runId);
}

/** A completed run of `steps` charges, written to the log. */
async function completedSource(runId: string, steps: number): Promise<RunEvent[]> {
  const { events } = await simulateRun(scriptedRequest(runId, chargeSteps(steps)), createScriptedModel());
  return store(events);
}

async function requestFork(body: object, msgID: string): Promise<void> {
  await env.setup.js.publish(SUBJECTS.fork, JSON.stringify(body), { msgID });
}

const observationSeq = (log: RunEvent[], step: number): number =>
  log.find((e) => e.type === 'tool_call_completed' && e.data.callId === `call-${step}`)!.seq;

function forkLetters(count: number): Promise<DeadLetter[]> {
  return untilDeadLetters(env.setup.jsm, 'dura.dlq.forks', count);
}

describe('a fork request', () => {
  it('starts a run with the source prefix, then the planner decides the next step with the new run keys', async () => {
    const source = await completedSource('fork-src-1', 4);
    const atSeq = observationSeq(source, 2);
    await requestFork({ v: FORK_VERSION, sourceRunId: 'fork-src-1', atSeq, runId: 'fork-new-1' }, 'f-1');
    const log = await eventually(async () => {
      const events = await env.setup.store.read('fork-new-1');
      return events.some((e) => e.type === 'tool_call_requested' && e.data.step === 3) ? events : undefined;
    }, 'the fork to request step 3');

    const prefix = source.filter((e) => e.seq <= atSeq);
    expect(log.slice(0, prefix.length).map((e) => [e.type, e.meta.id])).toEqual(
      prefix.map((e, i) => [e.type, forkEventId('fork-new-1', i)]),
    );
    expect(log[0]).toMatchObject({
      type: 'run_requested',
      data: { forkOf: { runId: 'fork-src-1', atSeq }, request: { runId: 'fork-new-1' } },
    });
    const copiedIntents = log.filter((e) => e.type === 'tool_call_requested' && e.data.step <= 2);
    expect(copiedIntents.map((e) => e.type === 'tool_call_requested' && e.data.idempotencyKey)).toEqual(
      source
        .filter((e) => e.type === 'tool_call_requested' && e.data.step <= 2)
        .map((e) => e.type === 'tool_call_requested' && e.data.idempotencyKey),
    );
    const step3 = log.find((e) => e.type === 'tool_call_requested' && e.data.step === 3);
    expect(step3?.type === 'tool_call_requested' && step3.data.idempotencyKey).toBe(
      idempotencyKey({ runId: 'fork-new-1', step: 3, tool: 'pay.charge', args: { amount: 300 } }),
    );
    expect(typesOf(log.slice(prefix.length))).toEqual(['thought', 'tool_call_requested']);
    // The source is untouched.
    expect(await env.setup.store.read('fork-src-1')).toEqual(source);
  });

  it('is a no-op when delivered again, and finishes a fork a crash left half-written', async () => {
    const source = await completedSource('fork-src-2', 3);
    const atSeq = observationSeq(source, 1);
    const body = { v: FORK_VERSION, sourceRunId: 'fork-src-2', atSeq, runId: 'fork-new-2' };
    await requestFork(body, 'f-2a');
    const first = await eventually(async () => {
      const events = await env.setup.store.read('fork-new-2');
      return events.some((e) => e.type === 'tool_call_requested' && e.data.step === 2) ? events : undefined;
    }, 'the fork to request step 2');
    await requestFork(body, 'f-2b'); // another msg-id: the planner sees it
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await env.setup.store.read('fork-new-2')).toEqual(first);

    // A crash after the first two copies of another fork: a redelivery appends the rest and drives it.
    const plan = planFork({ source, atSeq, runId: 'fork-new-3', ts: new Date().toISOString() });
    if (!plan.ok) throw new Error(plan.problem.message);
    await env.setup.store.append('fork-new-3', plan.events.slice(0, 2), { expectedSeq: 0 });
    await requestFork({ ...body, runId: 'fork-new-3' }, 'f-3');
    const finished = await eventually(async () => {
      const events = await env.setup.store.read('fork-new-3');
      return events.some((e) => e.type === 'tool_call_requested' && e.data.step === 2) ? events : undefined;
    }, 'the half-written fork to be finished and driven');
    expect(finished.slice(0, plan.events.length).map((e) => [e.type, e.meta.id])).toEqual(
      plan.events.map((e) => [e.type, e.meta.id]),
    );
    expect(typesOf(finished.slice(plan.events.length))).toEqual(['thought', 'tool_call_requested']);
  });

  it('between an intent and its observation, waits for the source outcome and copies it, not re-running the call', async () => {
    const { events } = await simulateRun(
      scriptedRequest('fork-src-4', chargeSteps(3)),
      createScriptedModel(),
    );
    const cut = events.findIndex((e) => e.type === 'tool_call_requested' && e.data.step === 2);
    // The source's call 2 is still in flight: its observation is not in the log yet.
    const source = await store(events.slice(0, cut + 1));
    const intentSeq = source.at(-1)!.seq;
    await requestFork(
      { v: FORK_VERSION, sourceRunId: 'fork-src-4', atSeq: intentSeq, runId: 'fork-new-4' },
      'f-4',
    );
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await env.setup.store.read('fork-new-4')).toEqual([]);
    // The source's call settles; the fork copies that outcome and moves on to step 3.
    const observation = events[cut + 1]!;
    const { seq: _seq, ...rest } = observation;
    await env.setup.store.append('fork-src-4', [rest], { expectedSeq: intentSeq });
    const log = await eventually(
      async () => {
        const found = await env.setup.store.read('fork-new-4');
        return found.some((e) => e.type === 'tool_call_requested' && e.data.step === 3) ? found : undefined;
      },
      'the fork to copy the outcome and request step 3',
      20_000,
    );
    const copied = log.find((e) => e.type === 'tool_call_completed' && e.data.callId === 'call-2');
    expect(copied).toMatchObject({
      data: observation.data,
      meta: { id: forkEventId('fork-new-4', cut + 1) },
    });
    const state = fold(log);
    expect(state.calls.find((c) => c.callId === 'call-2')).toMatchObject({
      status: 'completed',
      idempotencyKey: idempotencyKey({
        runId: 'fork-src-4',
        step: 2,
        tool: 'pay.charge',
        args: { amount: 200 },
      }),
    });
  });

  it('is refused with a reason when the source, the seq or the run id is wrong', async () => {
    const source = await completedSource('fork-src-5', 2);
    const before = (await storedMessages(env.setup.jsm, STREAMS.deadLetters, 'dura.dlq.forks')).length;
    await requestFork({ v: 1, sourceRunId: 'no-such-run', atSeq: 1, runId: 'fork-bad-1' }, 'f-5a');
    await requestFork({ v: 1, sourceRunId: 'fork-src-5', atSeq: 999_999, runId: 'fork-bad-2' }, 'f-5b');
    await requestFork(
      { v: 1, sourceRunId: 'fork-src-5', atSeq: source[2]!.seq, runId: 'fork-src-1' },
      'f-5c',
    );
    await requestFork(
      { v: 1, sourceRunId: 'fork-src-5', atSeq: source.at(-1)!.seq, runId: 'fork-bad-4' },
      'f-5d',
    );
    await requestFork({ v: 1, sourceRunId: 'fork-src-5', atSeq: 'ten', runId: 'fork-bad-5' }, 'f-5e');
    const letters = (await forkLetters(before + 5)).slice(before);
    const byRun = new Map(letters.map((l) => [l.runId, l]));
    expect(byRun.get('fork-bad-1')?.error).toMatchObject({ code: 'source_not_found' });
    expect(byRun.get('fork-bad-2')?.error).toMatchObject({ code: 'fork_point_not_found' });
    expect(byRun.get('fork-bad-2')?.error.message).toContain('has no event at seq 999999');
    expect(letters.find((l) => l.error.code === 'run_id_conflict')).toMatchObject({
      runId: 'fork-src-1',
      error: {
        message: 'run id fork-src-1 is already used by another run; fork fork-src-5 again with a new run id',
      },
    });
    expect(byRun.get('fork-bad-4')?.error).toMatchObject({ code: 'fork_point_terminal' });
    expect(byRun.get('fork-bad-5')).toMatchObject({
      error: { code: 'invalid_request' },
      issues: [expect.stringContaining('atSeq')],
    });
    for (const runId of ['fork-bad-1', 'fork-bad-2', 'fork-bad-4', 'fork-bad-5']) {
      const log = await env.setup.store.read(runId);
      expect(typesOf(log), runId).toEqual(['run_rejected']);
      expect(fold(log).status).toBe('rejected');
    }
    // The run whose id was taken is untouched: one run_requested, its own.
    const taken = await env.setup.store.read('fork-src-1');
    expect(taken.filter((e) => e.type === 'run_requested')).toHaveLength(1);
    expect(taken.some((e) => e.type === 'run_rejected')).toBe(false);
  });
});

/** Quote (echo of a price), then pay what the quote said: step 2 reads step 1's result. */
const STEPS: ScriptedStep[] = [
  { tool: 'echo', args: { price: '$input.price' } },
  { tool: 'echo', args: { paid: '$steps.1.price' } },
];

/** A completed source run of STEPS with input `{ price: 100 }`, written to the log. */
async function quotedSource(runId: string): Promise<RunEvent[]> {
  const request = { ...scriptedRequest(runId, STEPS), input: { price: 100 } };
  const results: JsonValue[] = [{ price: 100 }, { paid: 100 }];
  const { events } = await simulateRun(request, createScriptedModel(), {
    result: (step) => results[step - 1]!,
  });
  return store(events);
}

const intentOf = (log: RunEvent[], step: number) =>
  log.find((e) => e.type === 'tool_call_requested' && e.data.step === step);

async function untilStep(runId: string, step: number): Promise<RunEvent[]> {
  return eventually(async () => {
    const log = await env.setup.store.read(runId);
    return intentOf(log, step) ? log : undefined;
  }, `fork ${runId} to request step ${step}`);
}

describe('a fork with an edited tool result', () => {
  it('continues from the edited value, records who edited what, and keeps the edited call completed', async () => {
    const source = await quotedSource('edit-src-1');
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
    expect(await env.setup.store.read('edit-src-1')).toEqual(source);
  });
});

describe('a fork with an edited input', () => {
  it('at the run request, starts from the edited input', async () => {
    const source = await quotedSource('edit-src-2');
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
    const source = await quotedSource('edit-src-3');
    const before = (await storedMessages(env.setup.jsm, STREAMS.deadLetters, 'dura.dlq.forks')).length;
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
      const found = await storedMessages(env.setup.jsm, STREAMS.deadLetters, 'dura.dlq.forks');
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
      const log = await env.setup.store.read(runId);
      expect(typesOf(log), runId).toEqual(['run_rejected']);
    }
    // The refused requests are erased from dura.fork: the edited values are nowhere but hidden in dead letters.
    const kept = await storedMessages(env.setup.jsm, STREAMS.requests, SUBJECTS.fork);
    expect(kept.map((msg) => msg.string()).join('\n')).not.toContain('tok_secret');
  });
});
