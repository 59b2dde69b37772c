import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { eventually, freePort, useTestInfra } from '@dura/testing';
import {
  ApiError,
  ApiUnreachable,
  ClientNotConfigured,
  connectDuraClient,
  createDuraClient,
  NatsUnreachable,
  RunNotFound,
  type ConnectedDuraClient,
} from '../src/index';
import { startSystem, type DuraSystem } from './system';

const infra = useTestInfra();
let system: DuraSystem;
let client: ConnectedDuraClient;

const echo = (n: number) => Array.from({ length: n }, (_, i) => ({ tool: 'echo', args: { step: i + 1 } }));

/** The run's events until its terminal event, or what arrived within `timeoutMs` (the test then says what it saw). */
async function drain(runId: string, timeoutMs = 60_000): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of client.watchRun(runId, { signal: AbortSignal.timeout(timeoutMs) }))
    events.push(event);
  return events;
}

/** Waits until the projector has every event of the run the log has. */
async function projected(runId: string, events: RunEvent[]): Promise<void> {
  await eventually(async () => {
    const page = await client.events(runId, { limit: 1000 });
    return page.events.length === events.length ? true : undefined;
  }, `the projector to reach the end of ${runId}`);
}

let alpha: RunEvent[];
let beta: RunEvent[];
let gamma: RunEvent[];

/**
 * Waits until the run's tool call is in flight. A signal sent while a run is still pending (between
 * run_requested and run_started) is a separate case these tests do not exercise.
 */
async function callInFlight(runId: string): Promise<void> {
  await eventually(async () => {
    const events = await client.readEvents(runId);
    return events.some((e) => e.type === 'tool_call_requested') ? true : undefined;
  }, `a tool call of ${runId} in flight`);
}

beforeAll(async () => {
  system = await startSystem(infra().nats.url, infra().db.url);
  client = connectDuraClient({ natsUrl: infra().nats.url, apiUrl: system.apiUrl });
  const submit = (runId: string, steps: { tool: string; args: object }[], tags: string[]) =>
    client.submitRun({
      runId,
      agent: { kind: 'scripted', steps } as never,
      tags,
      metadata: { owner: runId },
    });
  // One after the other, so created_asc order is alpha, beta, gamma.
  await submit('sdk-alpha', echo(3), ['sdk', 'first']);
  alpha = await drain('sdk-alpha');
  await submit('sdk-beta', [{ tool: 'demo.fail', args: { message: 'broken on purpose' } }], ['sdk']);
  beta = await drain('sdk-beta');
  await submit('sdk-gamma', echo(1), ['sdk', 'last']);
  gamma = await drain('sdk-gamma');
  await Promise.all([
    projected('sdk-alpha', alpha),
    projected('sdk-beta', beta),
    projected('sdk-gamma', gamma),
  ]);
}, 180_000);

afterAll(async () => {
  await client?.close();
  await system?.stop();
});

describe('submitRun against the running system', () => {
  it('is idempotent on the run id: the same id and request again returns duplicate and starts nothing', async () => {
    const again = await client.submitRun({ runId: 'sdk-alpha', agent: { kind: 'scripted', steps: echo(3) } });

    expect(again).toEqual({ runId: 'sdk-alpha', duplicate: true });
    const state = await client.getRun('sdk-alpha');
    expect(state).toEqual(fold(alpha));
    expect(state.calls).toHaveLength(3);
    expect((await client.readEvents('sdk-alpha')).filter((e) => e.type === 'run_requested')).toHaveLength(1);
  });
});

describe('listRuns', () => {
  it('returns typed summaries of the runs, filtered by status, tag and tool', async () => {
    const all = await client.listRuns({ tag: 'sdk' });
    const failed = await client.listRuns({ tag: 'sdk', status: 'failed' });
    const both = await client.listRuns({ tag: ['sdk', 'last'] });
    const byTool = await client.listRuns({ tool: 'demo.fail' });

    expect(all.runs.map((r) => r.runId).sort()).toEqual(['sdk-alpha', 'sdk-beta', 'sdk-gamma']);
    expect(all.runs.find((r) => r.runId === 'sdk-alpha')).toEqual({
      runId: 'sdk-alpha',
      status: 'completed',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      steps: 3,
      pendingCalls: 0,
      lastError: null,
      usage: fold(alpha).usage,
      tags: ['sdk', 'first'],
      metadata: { owner: 'sdk-alpha' },
      lastSeq: alpha.at(-1)!.seq,
      tenant: 'default',
      children: 0,
      agent: 'scripted',
      parentRunId: null,
      costUsd: 0,
    });
    expect(failed.runs.map((r) => r.runId)).toEqual(['sdk-beta']);
    expect(failed.runs[0]?.lastError).toMatchObject({
      code: expect.any(String),
      message: expect.any(String),
    });
    expect(both.runs.map((r) => r.runId)).toEqual(['sdk-gamma']);
    expect(byTool.runs.map((r) => r.runId)).toEqual(['sdk-beta']);
  });

  it('pages with limit and cursor: every run once, in the order asked for', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listRuns({
        tag: 'sdk',
        sort: 'created_asc',
        limit: 1,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.runs.length).toBeLessThanOrEqual(1);
      seen.push(...page.runs.map((r) => r.runId));
      cursor = page.nextCursor;
    } while (cursor);

    expect(seen).toEqual(['sdk-alpha', 'sdk-beta', 'sdk-gamma']);
  });

  it('filters by creation time, taking a Date or an ISO string', async () => {
    const after = await client.listRuns({ tag: 'sdk', createdAfter: new Date(Date.now() + 3_600_000) });
    const before = await client.listRuns({ tag: 'sdk', createdBefore: '2999-01-01T00:00:00Z' });

    expect(after.runs).toEqual([]);
    expect(before.runs).toHaveLength(3);
  });

  it('turns a refused query into an ApiError with the server’s code and message', async () => {
    const error = await client.listRuns({ limit: 501 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect((error as ApiError).message).toMatch(/limit/);
  });
});

describe('events', () => {
  it('pages through the projected events with fromSeq and limit: the same events as the log', async () => {
    const first = await client.events('sdk-alpha', { limit: 4 });
    const rest = await client.events('sdk-alpha', { fromSeq: first.nextFromSeq!, limit: 1000 });

    expect(first.events).toEqual(JSON.parse(JSON.stringify(alpha.slice(0, 4))));
    expect(first.nextFromSeq).toBe(alpha[4]!.seq);
    expect(rest).toEqual({ events: JSON.parse(JSON.stringify(alpha.slice(4))) });
  });
});

describe('stateAt', () => {
  it('is the fold of the run’s events up to each seq', async () => {
    for (const [i, event] of alpha.entries()) {
      const past = await client.stateAt('sdk-alpha', event.seq);
      expect(past).toEqual({
        runId: 'sdk-alpha',
        at: event.seq,
        state: JSON.parse(JSON.stringify(fold(alpha.slice(0, i + 1)))),
      });
    }
  });

  it('throws RunNotFound for a run with no event at or before the seq', async () => {
    const unknown = await client.stateAt('sdk-nobody', 10).catch((e: unknown) => e);
    const tooEarly = await client.stateAt('sdk-gamma', 1).catch((e: unknown) => e);

    expect(unknown).toBeInstanceOf(RunNotFound);
    expect(tooEarly).toBeInstanceOf(RunNotFound);
    expect(tooEarly).toMatchObject({ code: 'run_not_found', runId: 'sdk-gamma' });
  });
});

describe('causes', () => {
  it('walks from an event back to the run’s root through causation ids', async () => {
    const last = alpha.at(-1)!;

    const chain = await client.causes('sdk-alpha', last.seq);

    expect(chain[0]).toEqual(JSON.parse(JSON.stringify(last)));
    for (let i = 1; i < chain.length; i += 1) expect(chain[i - 1]!.meta.causationId).toBe(chain[i]!.meta.id);
    expect(chain.at(-1)?.meta.causationId).toBeUndefined();
  });
});

describe('signal and cancel', () => {
  it('cancel stops a run in flight: the planner records run_cancelled with the reason', async () => {
    await client.submitRun({
      runId: 'sdk-cancelled',
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'test.sleep', args: { ms: 8000 } },
          { tool: 'echo', args: {} },
        ],
      },
    });
    await callInFlight('sdk-cancelled');

    const sent = await client.cancel('sdk-cancelled', { reason: 'not needed any more', mustExist: true });
    const events = await drain('sdk-cancelled');

    expect(sent.duplicate).toBe(false);
    expect(events.map((e) => e.type)).toContain('run_cancelled');
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: 'run_cancelled', data: { reason: 'not needed any more' } });
    expect((await client.getRun('sdk-cancelled')).status).toBe('cancelled');
    expect(events.filter((e) => e.type === 'tool_call_requested')).toHaveLength(1);
  });

  it('a signal reaches the run’s log as signal_received with its payload', async () => {
    await client.submitRun({
      runId: 'sdk-signalled',
      agent: { kind: 'scripted', steps: [{ tool: 'test.sleep', args: { ms: 4000 } }] },
    });
    await callInFlight('sdk-signalled');

    await client.signal('sdk-signalled', 'nudge', { payload: { n: 1 }, signalId: 'nudge-1' });
    const events = await drain('sdk-signalled');

    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['signal_received', 'run_completed']));
    expect(events.find((e) => e.type === 'signal_received')?.data).toEqual({
      signalId: 'nudge-1',
      name: 'nudge',
      payload: { n: 1 },
    });
    expect(events.at(-1)?.type).toBe('run_completed');
  });
});

describe('configuration and reachability errors', () => {
  it('read-API calls work without NATS, and NATS calls say NATS cannot be reached', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const offline = connectDuraClient({ natsUrl: url, apiUrl: system.apiUrl });
    try {
      expect((await offline.listRuns({ tag: 'sdk', limit: 1 })).runs).toHaveLength(1);
      const error = await offline.getRun('sdk-alpha').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NatsUnreachable);
      expect(error).toMatchObject({ code: 'nats_unreachable', retryable: true });
      expect((error as Error).message).toContain(`cannot reach NATS at ${url}`);
    } finally {
      await offline.close();
    }
  });

  it('without apiUrl, read-API calls say to pass it; without NATS handles, NATS calls say how to give them', async () => {
    const noApi = createDuraClient({});

    const apiMissing = await noApi.listRuns().catch((e: unknown) => e);
    const natsMissing = await noApi.getRun('sdk-alpha').catch((e: unknown) => e);

    expect(apiMissing).toBeInstanceOf(ClientNotConfigured);
    expect(apiMissing).toMatchObject({ code: 'api_not_configured' });
    expect((apiMissing as Error).message).toMatch(/pass apiUrl to createDuraClient/);
    expect(natsMissing).toMatchObject({ code: 'nats_not_configured' });
    expect((natsMissing as Error).message).toMatch(/pass \{ js, jsm \}/);
  });

  it('an API nobody listens on is ApiUnreachable naming the URL', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;

    const error = await createDuraClient({ apiUrl: url })
      .events('sdk-alpha')
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiUnreachable);
    expect(error).toMatchObject({
      code: 'api_unreachable',
      retryable: true,
      url: `${url}/runs/sdk-alpha/events`,
    });
  });
});
