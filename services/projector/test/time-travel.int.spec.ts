import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ApiErrorSchema,
  CausesResponseSchema,
  StateAtResponseSchema,
  newEvent,
  type NewEvent,
  type RunEvent,
} from '@dura/contracts';
import { fold } from '@dura/core';
import { RunLog } from '@dura/core/testing';
import { RunScript, asJson, caughtUp } from './support';
import { useProjectorApi, getJson } from './projector-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const api = useProjectorApi();
const RUN = 'run-thirty';
/** The 30-step run's events as the log holds them, with their stream sequences. */
let logged: RunEvent[] = [];

/** A 30-step run as the planner and gateway would log it, built with @dura/core's RunLog. */
function thirtyStepRun(): NewEvent[] {
  const plan = Array.from({ length: 30 }, (_, i) => ({ tool: 'echo', args: { step: i + 1 } }));
  const log = new RunLog(RUN).request(plan).start();
  for (const step of plan) {
    log.think([step]).intents();
    log.complete(`call-${step.args.step}`, { echoed: step.args.step });
  }
  log.finish({ steps: 30 });
  return log.events.map(({ seq: _seq, ...event }): NewEvent => event);
}

beforeAll(async () => {
  const { setup, projector } = api();
  // Another run shares the stream, so the 30-step run's sequences have gaps and do not start at 1.
  const other = RunScript.complete('run-other', 40).events;
  let last = 0;
  for (const [i, event] of thirtyStepRun().entries()) {
    const neighbour = other[i];
    if (neighbour) await setup.store.append('run-other', [neighbour], { expectedSeq: 'any' });
    last = (await setup.store.append(RUN, [event], { expectedSeq: last })).lastSeq;
  }
  logged = await setup.store.read(RUN);
  await caughtUp(setup, projector.position);
});

const get = (path: string) => getJson(api().http.url, path);

async function refused(path: string, status: number, code: string): Promise<string> {
  const response = await get(path);
  expect(response.status).toBe(status);
  const { error } = ApiErrorSchema.parse(response.body);
  expect(error.code).toBe(code);
  return error.message;
}

describe('GET /runs/:id/state?at=', () => {
  it('equals fold(events[0..N]) for every event N of a 30-step run', async () => {
    expect(logged).toHaveLength(2 + 3 * 30 + 2);
    expect(logged[0]!.seq).toBeGreaterThan(1);
    for (const [i, event] of logged.entries()) {
      const { status, body } = await get(`/runs/${RUN}/state?at=${event.seq}`);
      expect(status).toBe(200);
      const answer = StateAtResponseSchema.parse(body);
      expect(answer).toEqual({ runId: RUN, at: event.seq, state: asJson(fold(logged.slice(0, i + 1))) });
      expect((body as { state: unknown }).state).toEqual(asJson(fold(logged.slice(0, i + 1))));
    }
  });

  it('between two of the run’s events, and past its end, answers the state after the last one before', async () => {
    const gap = logged[10]!.seq + 1;
    expect(gap).toBeLessThan(logged[11]!.seq);
    expect((await get(`/runs/${RUN}/state?at=${gap}`)).body).toEqual({
      runId: RUN,
      at: gap,
      state: asJson(fold(logged.slice(0, 11))),
    });
    const end = (await get(`/runs/${RUN}/state?at=999999`)).body as { state: unknown };
    expect(end.state).toEqual((await get(`/runs/${RUN}`)).body);
    expect(end.state).toMatchObject({ status: 'completed', steps: 30, output: { steps: 30 } });
  });

  it('refuses a missing or bad `at`, an `at` before the run’s first event, and an unknown run', async () => {
    for (const query of ['', '?at=', '?at=x', '?at=0', '?at=-3', '?at=1.5'])
      expect(await refused(`/runs/${RUN}/state${query}`, 400, 'bad_query')).toMatch(
        /query parameter at (is required: the stream sequence to fold up to|must be an integer >= 1)/,
      );
    expect(await refused(`/runs/${RUN}/state?at=1`, 404, 'event_not_found')).toBe(
      `run ${RUN} has no event at or before seq 1: its first event is at seq ${logged[0]!.seq}; ask for at >= ${logged[0]!.seq}`,
    );
    expect(await refused('/runs/run-nobody/state?at=5', 404, 'run_not_found')).toMatch(
      /^no run run-nobody in the projection \(position \d+\): check the run id/,
    );
    expect(await refused('/runs/run.bad/state?at=5', 400, 'bad_run_id')).toMatch(/"run.bad" is not a run id/);
  });
});

describe('GET /runs/:id/events/:seq/causes', () => {
  it('walks from an event back to the root of the 30-step run', async () => {
    for (const i of [0, 1, 17, 60, logged.length - 1]) {
      const { status, body } = await get(`/runs/${RUN}/events/${logged[i]!.seq}/causes`);
      expect(status).toBe(200);
      const { chain } = CausesResponseSchema.parse(body);
      // RunLog's events are each caused by the one before, so the chain is the log up to i, backwards.
      expect(chain).toEqual(asJson(logged.slice(0, i + 1).reverse()));
    }
  });

  it('follows causation ids, not log order, and stops at a cause outside the run', async () => {
    const runId = 'run-fan';
    const meta = (id: string, causationId?: string) => ({
      id,
      runId,
      ts: '2025-02-01T00:00:00.000Z',
      correlationId: runId,
      ...(causationId ? { causationId } : {}),
    });
    const calls = [
      { callId: 'c1', tool: 'echo', args: { n: 1 } },
      { callId: 'c2', tool: 'echo', args: { n: 2 } },
    ];
    const request = { v: 1 as const, runId, agent: { kind: 'scripted' as const, steps: [] } };
    const usage = { inputTokens: 1, outputTokens: 1 };
    const model = { id: 'scripted', promptVersion: 'test' };
    const observation = (n: number) => ({ idempotencyKey: `k${n}`, result: n, attempt: 1, deduped: false });
    const events = [
      newEvent('run_requested', { request }, meta('e-req', 'submit-42')),
      newEvent('run_started', {}, meta('e-start', 'e-req')),
      newEvent(
        'thought',
        { step: 0, model, decision: { kind: 'tool_calls', calls }, usage, finishReason: 'tool_calls' },
        meta('e-think', 'e-start'),
      ),
      newEvent(
        'tool_call_requested',
        { ...calls[0]!, step: 1, idempotencyKey: 'k1' },
        meta('e-i1', 'e-think'),
      ),
      newEvent(
        'tool_call_requested',
        { ...calls[1]!, step: 2, idempotencyKey: 'k2' },
        meta('e-i2', 'e-think'),
      ),
      newEvent(
        'tool_call_completed',
        { callId: 'c2', ...observation(2), durationMs: 1 },
        meta('e-o2', 'e-i2'),
      ),
      newEvent(
        'tool_call_completed',
        { callId: 'c1', ...observation(1), durationMs: 1 },
        meta('e-o1', 'e-i1'),
      ),
    ];
    const { setup, projector } = api();
    await setup.store.append(runId, events, { expectedSeq: 0 });
    await caughtUp(setup, projector.position);
    const stored = await setup.store.read(runId);
    const bySeq = (ids: string[]) => asJson(ids.map((id) => stored.find((e) => e.meta.id === id)));
    const chainOf = async (id: string) => {
      const seq = stored.find((e) => e.meta.id === id)!.seq;
      return CausesResponseSchema.parse((await get(`/runs/${runId}/events/${seq}/causes`)).body).chain;
    };
    expect(await chainOf('e-o1')).toEqual(bySeq(['e-o1', 'e-i1', 'e-think', 'e-start', 'e-req']));
    expect(await chainOf('e-o2')).toEqual(bySeq(['e-o2', 'e-i2', 'e-think', 'e-start', 'e-req']));
    expect(await chainOf('e-req')).toEqual(bySeq(['e-req']));
  });

  it('lists the approval that released a call among the causes of its outcome and of the run end', async () => {
    // As the planner logs it: the wait is caused by the thought (the same turn), the signal by the wait, the
    // call outcome by the call's request; only the fold says the signal released the call.
    const runId = 'run-approved';
    const plan = [{ tool: 'deploy.run', args: { env: 'prod' }, approval: { onTimeout: 'reject' } }];
    const log = new RunLog(runId).request().start().think(plan).intents();
    log.add('wait_requested', {
      waitId: 'approval:call-1',
      kind: 'approval',
      signal: 'approve',
      callId: 'call-1',
      onTimeout: 'reject',
    });
    log.add('signal_received', {
      signalId: 'sig-1',
      name: 'approve',
      payload: { callId: 'call-1', approved: true },
    });
    log.complete('call-1').finish();
    const causedBy: Record<number, number> = { 5: 3, 7: 4 };
    const events = log.events.map(({ seq, ...event }): NewEvent => {
      const cause = causedBy[seq];
      return cause === undefined
        ? event
        : { ...event, meta: { ...event.meta, causationId: `${runId}#${cause}` } };
    });
    const { setup, projector } = api();
    await setup.store.append(runId, events, { expectedSeq: 0 });
    await caughtUp(setup, projector.position);
    const stored = await setup.store.read(runId);
    const chainOf = async (n: number) => {
      const { body } = await get(`/runs/${runId}/events/${stored[n - 1]!.seq}/causes`);
      return CausesResponseSchema.parse(body).chain.map((e) => e.type);
    };
    const released = ['signal_received', 'wait_requested', 'tool_call_requested', 'thought', 'run_started'];
    expect(await chainOf(7)).toEqual(['tool_call_completed', ...released, 'run_requested']);
    expect(await chainOf(9)).toEqual([
      'run_completed',
      'thought',
      'tool_call_completed',
      ...released,
      'run_requested',
    ]);
  });

  it('refuses a seq that is not an event of the run, a bad seq, and an unknown run', async () => {
    const foreign = logged[5]!.seq + 1;
    expect(await refused(`/runs/${RUN}/events/${foreign}/causes`, 404, 'event_not_found')).toBe(
      `run ${RUN} has no event at seq ${foreign} (its events end at seq ${logged.at(-1)!.seq}); take seqs from GET /runs/${RUN}/events`,
    );
    expect(await refused(`/runs/${RUN}/events/first/causes`, 400, 'bad_query')).toBe(
      'path parameter seq must be an integer >= 1, got "first"',
    );
    expect(await refused('/runs/run-nobody/events/3/causes', 404, 'run_not_found')).toMatch(
      /no run run-nobody/,
    );
  });
});

describe('time travel past the projection’s position', () => {
  it('reads the rest from the log, so the answer is the fold whatever the projector’s lag', async () => {
    const { setup, projector } = api();
    const position = projector.position;
    await projector.stop();
    const late = RunScript.complete('run-late', 2);
    await setup.store.append('run-late', late.events, { expectedSeq: 0 });
    const events = await setup.store.read('run-late');
    expect(position()).toBeLessThan(events[0]!.seq);
    for (const i of [0, 3, events.length - 1]) {
      const { status, body } = await get(`/runs/run-late/state?at=${events[i]!.seq}`);
      expect(status).toBe(200);
      expect(StateAtResponseSchema.parse(body).state).toEqual(asJson(fold(events.slice(0, i + 1))));
    }
  });
});
