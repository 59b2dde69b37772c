// The fixture lives with the contracts (it is their schema-evolution fixture); the fold test lives here because
// contracts cannot depend on core without a circular project dependency.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CURRENT_EVENT_VERSIONS, decodeEvent, type RunEvent } from '@dura/contracts';
import { fold, idempotencyKey, nextAction, resolveReferences } from '../src/index';
import { deepFreeze } from '../src/testing';

const fixture = new URL('../../contracts/test/fixtures/run-log-v1.json', import.meta.url);
const stored = JSON.parse(readFileSync(fixture, 'utf8')) as unknown[];
const decode = (): RunEvent[] => stored.map((raw, i) => decodeEvent(raw, i + 1));

describe('a run log written by release 0.1 (run_requested and thought at v1)', () => {
  it('decodes to current versions only', () => {
    for (const event of decode()) expect(event.v).toBe(CURRENT_EVENT_VERSIONS[event.type]);
  });

  it('folds to the completed two-step run it recorded', () => {
    const state = fold(decode().map(deepFreeze));
    expect(state).toMatchObject({
      runId: 'deploy-web-20241103-7f3a',
      status: 'completed',
      steps: 2,
      decisions: 3,
      openDecision: null,
      eventCount: 12,
      lastSeq: 12,
      output: { url: 'https://staging.acme.dev', image: 'registry.acme.dev/web:3f9c2e1' },
      usage: { inputTokens: 0, outputTokens: 0 },
      createdAt: '2024-11-03T09:14:00.100Z',
      request: {
        v: 1,
        agent: { kind: 'scripted', steps: [{ tool: 'build.image' }, { tool: 'deploy.service' }] },
      },
    });
    expect(state.calls).toMatchObject([
      {
        callId: 'call-1',
        step: 1,
        status: 'completed',
        attempts: 1,
        result: { imageTag: 'registry.acme.dev/web:3f9c2e1' },
      },
      {
        callId: 'call-2',
        step: 2,
        status: 'completed',
        attempts: 2,
        result: { url: 'https://staging.acme.dev' },
      },
    ]);
    expect(nextAction(state)).toEqual({ kind: 'idle', reason: 'finished' });
  });

  it('folds the same from any point, as a resume after the upgrade would', () => {
    const events = decode();
    for (let cut = 0; cut <= events.length; cut += 1) {
      expect(fold(events.slice(cut), fold(events.slice(0, cut)))).toEqual(fold(events));
    }
  });

  it('recorded the idempotency keys this release still derives, so a re-driven call is not run twice', () => {
    const intents = decode().filter((event) => event.type === 'tool_call_requested');
    expect(intents).toHaveLength(2);
    for (const { data } of intents) {
      const runId = 'deploy-web-20241103-7f3a';
      expect(idempotencyKey({ runId, step: data.step, tool: data.tool, args: data.args })).toBe(
        data.idempotencyKey,
      );
    }
  });

  it('resolves the plan references of the upcast request against the recorded results', () => {
    const state = fold(decode());
    const results = new Map(state.calls.map((call) => [call.step, call.result ?? null]));
    const agent = state.request!.agent;
    if (agent.kind !== 'scripted') throw new Error('the legacy run is scripted');
    const planned = agent.steps[1]!.args;
    expect(resolveReferences(planned, { results, input: state.request!.input })).toEqual(
      state.calls[1]!.args,
    );
  });
});
