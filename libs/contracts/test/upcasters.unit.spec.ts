import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CURRENT_EVENT_VERSIONS,
  ContractViolation,
  EVENT_TYPES,
  UPCASTERS,
  WireEventSchema,
  decodeEvent,
  upcast,
  type RunEvent,
} from '../src/index';
import { SAMPLE_DATA, sampleMeta } from './sample-events';

/** A 2-step run as release 0.1 stored it: `run_requested` and `thought` at version 1. */
const stored = JSON.parse(
  readFileSync(new URL('./fixtures/run-log-v1.json', import.meta.url), 'utf8'),
) as unknown[];
const decoded = (): RunEvent[] => stored.map((raw, i) => decodeEvent(raw, i + 1));
const wire = (type: string, v: number, data: unknown) => ({ type, v, data, meta: sampleMeta() });

describe('the release 0.1 fixture log', () => {
  it('is stored as wire envelopes, with old versions of run_requested and thought', () => {
    const envelopes = stored.map((raw) => WireEventSchema.parse(raw));
    const old = envelopes.filter(
      (e) => e.v < CURRENT_EVENT_VERSIONS[e.type as keyof typeof CURRENT_EVENT_VERSIONS],
    );
    expect(new Set(old.map((e) => e.type))).toEqual(
      new Set(['run_requested', 'run_started', 'thought', 'tool_call_requested', 'tool_call_completed']),
    );
    expect(envelopes.map((e) => e.v).every((v) => v === 1)).toBe(true);
  });

  it('decodes every event to its current version', () => {
    const events = decoded();
    expect(events).toHaveLength(stored.length);
    for (const event of events) expect(event.v).toBe(CURRENT_EVENT_VERSIONS[event.type]);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
  });

  it('moves the v1 plan into a scripted agent of a v1 request', () => {
    const [requested] = decoded();
    expect(requested).toMatchObject({
      type: 'run_requested',
      v: CURRENT_EVENT_VERSIONS.run_requested,
      data: {
        request: {
          v: 1,
          runId: 'deploy-web-20241103-7f3a',
          input: { ticket: 'OPS-1432' },
          agent: {
            kind: 'scripted',
            steps: [
              { tool: 'build.image', args: { repo: 'acme/web', ref: 'main', dockerfile: 'Dockerfile' } },
              {
                tool: 'deploy.service',
                args: { service: 'web', image: '$steps.1.imageTag', env: 'staging' },
              },
            ],
          },
        },
      },
    });
  });

  it('turns v1 thoughts into decisions: calls become tool_calls, an output becomes complete', () => {
    const thoughts = decoded().filter((event) => event.type === 'thought');
    expect(thoughts.map((t) => t.data.decision.kind)).toEqual(['tool_calls', 'tool_calls', 'complete']);
    expect(thoughts[0]!.data).toEqual({
      step: 0,
      model: { id: 'scripted', promptVersion: 'unversioned' },
      content: 'step 1 of 2: build.image',
      decision: {
        kind: 'tool_calls',
        calls: [
          {
            callId: 'call-1',
            tool: 'build.image',
            args: { repo: 'acme/web', ref: 'main', dockerfile: 'Dockerfile' },
          },
        ],
      },
      usage: { inputTokens: 0, outputTokens: 0 },
      finishReason: 'unknown',
    });
    expect(thoughts[2]!.data.decision).toEqual({
      kind: 'complete',
      output: { url: 'https://staging.acme.dev', image: 'registry.acme.dev/web:3f9c2e1' },
    });
  });

  it('keeps meta exactly as stored', () => {
    decoded().forEach((event, i) => expect(event.meta).toEqual((stored[i] as { meta: unknown }).meta));
  });
});

describe('upcasters', () => {
  it('exist for every version below the current one', () => {
    for (const type of EVENT_TYPES) {
      for (let v = 1; v < CURRENT_EVENT_VERSIONS[type]; v += 1)
        expect(UPCASTERS[type]?.[v]).toBeTypeOf('function');
    }
  });

  it('map thought v1 token totals to output tokens, and no calls without output to a bare completion', () => {
    const thought = decodeEvent(
      wire('thought', 1, { step: 4, model: 'gpt-4o', calls: [], usage: { totalTokens: 1234 } }),
      1,
    );
    expect(thought.data).toEqual({
      step: 4,
      model: { id: 'gpt-4o', promptVersion: 'unversioned' },
      decision: { kind: 'complete' },
      usage: { inputTokens: 0, outputTokens: 1234 },
      finishReason: 'unknown',
    });
  });

  it('move run_requested v2 tag pairs into metadata (tags became a list of labels)', () => {
    const request = { v: 1, runId: 'run-1', agent: { kind: 'scripted', steps: [] }, input: { a: 1 } };
    const v2 = { request: { ...request, tags: { team: 'web', env: 'staging' } } };
    expect(decodeEvent(wire('run_requested', 2, v2), 7).data).toEqual({
      request: { ...request, metadata: { team: 'web', env: 'staging' } },
    });
    expect(decodeEvent(wire('run_requested', 2, { request }), 7).data).toEqual({ request });
    const child = { childRunId: 'run-1-child', request: { ...request, tags: { team: 'web' } } };
    expect(decodeEvent(wire('child_run_requested', 1, child), 8).data).toEqual({
      childRunId: 'run-1-child',
      request: { ...request, metadata: { team: 'web' } },
    });
  });

  it('refuse run_requested v2 whose tags are not string pairs', () => {
    const request = { v: 1, runId: 'run-1', agent: { kind: 'scripted', steps: [] }, tags: { team: 1 } };
    expect(() => decodeEvent(wire('run_requested', 2, { request }), 3)).toThrow(
      'event at seq 3 (run_requested v2): invalid run_requested v2 request',
    );
  });

  it('make an approve recorded as signal_received v1 say approved, so the run folds as it did', () => {
    const approve = (payload?: unknown) =>
      decodeEvent(
        wire('signal_received', 1, {
          signalId: 's',
          name: 'approve',
          ...(payload === undefined ? {} : { payload }),
        }),
        5,
      ).data;
    expect(approve({ callId: 'call-1' })).toMatchObject({ payload: { callId: 'call-1', approved: true } });
    expect(approve()).toMatchObject({ payload: { approved: true } });
    expect(approve(true)).toMatchObject({ payload: { approved: true } });
    // ctx.approve refused on approved: false then as now; other signals are unchanged.
    expect(approve({ approved: false })).toMatchObject({ payload: { approved: false } });
    const other = { signalId: 's', name: 'deploy', payload: {} };
    expect(decodeEvent(wire('signal_received', 1, other), 6).data).toEqual(other);
  });

  it('leave a current version alone', () => {
    const data = { waitId: 'w' };
    expect(upcast('timer_fired', 1, data)).toBe(data);
  });

  it('pass the data of the agents release’s optional fields through unchanged, at the new version', () => {
    const data = { callId: 'c', step: 1, tool: 'echo', args: {}, idempotencyKey: 'k' };
    expect(upcast('tool_call_requested', 1, data)).toBe(data);
    expect(upcast('thought', 2, SAMPLE_DATA.thought)).toBe(SAMPLE_DATA.thought);
  });

  it('read a fork recorded before edits (run_requested v3, tool_call_completed v2) as it was', () => {
    const request = { v: 1, runId: 'fork-1', agent: { kind: 'scripted', steps: [] } };
    const requested = { request, forkOf: { runId: 'src', atSeq: 7 } };
    const completed = {
      callId: 'c',
      idempotencyKey: 'k',
      result: { ok: true },
      attempt: 1,
      deduped: false,
      durationMs: 3,
    };
    const fromV3 = decodeEvent(wire('run_requested', 3, requested), 1);
    const fromV2 = decodeEvent(wire('tool_call_completed', 2, completed), 2);
    expect([fromV3.v, fromV2.v]).toEqual([4, 3]);
    expect(fromV3.data).toEqual(requested);
    expect(fromV2.data).toEqual(completed);
    expect(fromV2.type === 'tool_call_completed' && fromV2.data.edited).toBeUndefined();
  });

  it('refuse a version no upcaster chain reaches', () => {
    expect(() => upcast('run_started', 0, {})).toThrow(
      new ContractViolation('no upcaster turns run_started v0 into v3'),
    );
  });

  it('refuse old data that does not match its old shape, naming the event and the fields', () => {
    try {
      decodeEvent(wire('thought', 1, { step: 0 }), 5);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ContractViolation);
      expect((error as ContractViolation).message).toBe('event at seq 5 (thought v1): invalid thought v1');
      expect((error as ContractViolation).issues).toEqual([
        'model: Invalid input: expected string, received undefined',
        'usage: Invalid input: expected object, received undefined',
      ]);
    }
  });

  it('refuse an old plan whose upcast request is invalid today', () => {
    const data = { runId: 'run.with.dots', plan: [] };
    expect(() => decodeEvent(wire('run_requested', 1, data), 1)).toThrow(ContractViolation);
  });
});
