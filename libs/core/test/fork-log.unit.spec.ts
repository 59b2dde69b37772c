import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { NewEvent, RunEvent } from '@dura/contracts';
import { fold, forkEventId, idempotencyKey, nextAction, planFork, type ForkPlan } from '../src/index';
import { RunLog, arbValidHistory } from '../src/testing';

const charge = (amount: number) => ({ tool: 'pay.charge', args: { amount } });
const TS = '2025-06-01T12:00:00.000Z';

/** A completed run of `steps` charges, one decision per step, on a stream shared with other runs (gaps). */
function paidRun(runId: string, steps: number): RunLog {
  const log = new RunLog(runId, [2, 0, 1]).request(
    Array.from({ length: steps }, (_, i) => charge((i + 1) * 100)),
  );
  log.start();
  for (let step = 1; step <= steps; step += 1) {
    log
      .think([charge(step * 100)])
      .intents()
      .complete(`call-${step}`, { chargeId: `ch_${step}` });
  }
  return log.finish('paid');
}

function events(plan: ForkPlan): NewEvent[] {
  if (!plan.ok) throw new Error(`expected a fork plan, got ${plan.problem.code}: ${plan.problem.message}`);
  return plan.events;
}

/** The fork's events as the store would return them: sequences stamped after the fork's first event. */
function stored(forked: NewEvent[], firstSeq = 1000): RunEvent[] {
  return forked.map((event, i) => ({ ...event, seq: firstSeq + i }));
}

/** The copy of the event the source event's causation names, when the fork copied it. */
function causedBy(prefix: RunEvent[], event: RunEvent, runId: string): { causationId?: string } {
  const cause = prefix.findIndex((e) => e.meta.id === event.meta.causationId);
  return cause < 0 ? {} : { causationId: forkEventId(runId, cause) };
}

const observationOf = (log: RunEvent[], step: number) =>
  log.find((e) => e.type === 'tool_call_completed' && e.data.callId === `call-${step}`)!;

describe('planFork', () => {
  const source = paidRun('src', 10).events;

  it('copies the prefix after run_requested, re-stamped for the new run, and records where it came from', () => {
    const at = observationOf(source, 5).seq;
    const forked = events(planFork({ source, atSeq: at, runId: 'fork-1', ts: TS, trace: 't-1' }));
    const prefix = source.filter((e) => e.seq <= at);
    expect(forked).toHaveLength(prefix.length);
    const requested = source[0]!.type === 'run_requested' ? source[0].data.request : undefined;
    expect(forked[0]).toMatchObject({
      type: 'run_requested',
      data: { request: { ...requested, runId: 'fork-1' }, forkOf: { runId: 'src', atSeq: at } },
    });
    forked.forEach((event, i) => {
      expect(event.meta).toEqual({
        id: forkEventId('fork-1', i),
        runId: 'fork-1',
        ts: TS,
        correlationId: 'fork-1',
        trace: 't-1',
        ...causedBy(prefix, prefix[i]!, 'fork-1'),
      });
      if (i > 0) expect([event.type, event.data]).toEqual([prefix[i]!.type, prefix[i]!.data]);
    });
  });

  it('maps every causation to the copy of the event it names', () => {
    const log = new RunLog('u')
      .request([charge(1)])
      .start()
      .think([charge(1)])
      .intents()
      .complete('call-1');
    const forked = events(planFork({ source: log.events, atSeq: log.lastSeq, runId: 'f', ts: TS }));
    expect(forked.map((e) => e.meta.causationId)).toEqual([
      undefined,
      ...[0, 1, 2, 3].map((i) => forkEventId('f', i)),
    ]);
  });

  it('folds into the source state at the fork point, under the new id, with the source keys kept', () => {
    const at = observationOf(source, 5).seq;
    const state = fold(stored(events(planFork({ source, atSeq: at, runId: 'fork-1', ts: TS }))));
    const original = fold(source.filter((e) => e.seq <= at));
    expect(state).toMatchObject({ runId: 'fork-1', status: 'running', steps: 5, decisions: 5 });
    expect(state.calls.map((c) => [c.status, c.idempotencyKey, c.result])).toEqual(
      original.calls.map((c) => [c.status, c.idempotencyKey, c.result]),
    );
    // What comes next is decided afresh: step 6, whose key names the new run.
    expect(nextAction(state)).toEqual({ kind: 'decide' });
    const key6 = idempotencyKey({ runId: 'fork-1', step: 6, ...charge(600) });
    expect(key6.startsWith('fork-1:6:')).toBe(true);
  });

  it('at a thought whose intents come later, leaves the decision open: the fork records them with its own keys', () => {
    const thought = source.filter((e) => e.type === 'thought')[3]!;
    const state = fold(stored(events(planFork({ source, atSeq: thought.seq, runId: 'f', ts: TS }))));
    const action = nextAction(state);
    expect(action).toMatchObject({
      kind: 'record',
      events: [
        {
          type: 'tool_call_requested',
          data: { step: 4, idempotencyKey: idempotencyKey({ runId: 'f', step: 4, ...charge(400) }) },
        },
      ],
    });
  });

  it('between an intent and its observation, copies the recorded outcome instead of running the call again', () => {
    const intent = source.find((e) => e.type === 'tool_call_requested' && e.data.step === 3)!;
    const forked = events(planFork({ source, atSeq: intent.seq, runId: 'f', ts: TS }));
    const last = forked.at(-1)!;
    expect(last).toMatchObject({
      type: 'tool_call_completed',
      data: observationOf(source, 3).data,
      meta: { causationId: forkEventId('f', forked.length - 2) },
    });
    const state = fold(stored(forked));
    expect(state.calls[2]).toMatchObject({
      status: 'completed',
      idempotencyKey: intent.type === 'tool_call_requested' ? intent.data.idempotencyKey : '',
    });
    expect(nextAction(state)).toEqual({ kind: 'decide' });
  });

  it('copies retryable attempts up to the final outcome, and waits while the source has none', () => {
    const log = new RunLog('s')
      .request([charge(1)])
      .start()
      .think([charge(1)])
      .intents();
    const intentSeq = log.lastSeq;
    log.fail('call-1', true, 1);
    const waiting = planFork({ source: log.events, atSeq: intentSeq, runId: 'f', ts: TS });
    expect(waiting).toMatchObject({ ok: false, problem: { code: 'fork_source_unsettled', retryable: true } });
    expect(!waiting.ok && waiting.problem.message).toContain('call call-1 (step 1, pay.charge)');
    log.complete('call-1', { chargeId: 'ch' }, 2);
    const forked = events(planFork({ source: log.events, atSeq: intentSeq, runId: 'f', ts: TS }));
    expect(forked.slice(-2).map((e) => e.type)).toEqual(['tool_call_failed', 'tool_call_completed']);
    expect(fold(stored(forked)).calls[0]).toMatchObject({ status: 'completed', attempts: 2 });
  });

  it('leaves out snapshot markers, which name positions in the source log', () => {
    const log = new RunLog('s')
      .request([charge(1)])
      .start()
      .snapshot()
      .think([charge(1)]);
    const forked = events(planFork({ source: log.events, atSeq: log.lastSeq, runId: 'f', ts: TS }));
    expect(forked.map((e) => e.type)).toEqual(['run_requested', 'run_started', 'thought']);
    expect(forked[2]?.meta.causationId).toBeUndefined();
  });

  it.each([
    ['an unknown source', [], 1, 'source_not_found'],
    ['a seq that is not an event of the source', source, source.at(-1)!.seq + 5, 'fork_point_not_found'],
    ['the run_completed that ends the source', source, source.at(-1)!.seq, 'fork_point_terminal'],
    [
      'a source rejected at intake',
      new RunLog('r').request().add('run_rejected', { error: { code: 'x', message: 'y' } }).events,
      1,
      'source_not_forkable',
    ],
  ] as const)('refuses %s, saying why', (_what, from, atSeq, code) => {
    const plan = planFork({ source: from, atSeq, runId: 'f', ts: TS });
    expect(plan).toMatchObject({ ok: false, problem: { code, retryable: false } });
    expect(!plan.ok && plan.problem.message.length).toBeGreaterThan(20);
  });

  it('names where the source events lie when the seq is wrong', () => {
    const plan = planFork({ source, atSeq: 2, runId: 'f', ts: TS });
    expect(!plan.ok && plan.problem.message).toContain(
      `between seqs ${source[0]!.seq}..${source.at(-1)!.seq}`,
    );
  });

  it('any fork of any generated run folds, and the fork agrees with the source on every call it copied', () => {
    fc.assert(
      fc.property(arbValidHistory(), fc.nat(), (source, pick) => {
        if (source.length === 0) return;
        const at = source[pick % source.length]!;
        const plan = planFork({ source, atSeq: at.seq, runId: 'fork-x', ts: TS });
        if (!plan.ok) return;
        const state = fold(stored(plan.events));
        const original = fold(source.filter((e) => e.seq <= at.seq));
        expect(state.runId).toBe('fork-x');
        expect(state.steps).toBe(original.steps);
        expect(state.calls.map((c) => c.idempotencyKey)).toEqual(original.calls.map((c) => c.idempotencyKey));
        expect(state.calls.some((c) => c.status === 'pending')).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});
