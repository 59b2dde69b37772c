import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunStateSchema, RunStatusSchema } from '@dura/contracts';
import { fold, isTerminal } from '@dura/core';
import { RunLog, arbValidHistory, requestedData } from '@dura/core/testing';
import { summarize } from '../src/index';

const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('summarize', () => {
  it('counts pending calls and shows a retrying call’s error until the call succeeds', () => {
    const log = new RunLog('run-s')
      .request()
      .start()
      .think([
        { tool: 'mail.send', args: { to: 'a' } },
        { tool: 'http.request', args: { url: 'u' } },
      ]);
    log.intents().fail('call-1', true);
    const retrying = summarize('run-s', fold(log.events));
    expect(retrying).toMatchObject({
      status: 'running',
      steps: 2,
      pendingCalls: 2,
      lastError: { code: 'timeout', message: 'tool failed' },
      tools: ['http.request', 'mail.send'],
      inputTokens: 10,
      outputTokens: 5,
    });
    log.complete('call-1').complete('call-2').finish();
    const done = summarize('run-s', fold(log.events));
    expect(done).toMatchObject({ status: 'completed', pendingCalls: 0, lastSeq: log.lastSeq });
    expect(done.lastError).toBeUndefined();
  });

  it('prefers the run’s own error, and takes tags and metadata from the request', () => {
    const log = new RunLog('run-f').add('run_requested', {
      request: {
        ...requestedData('run-f').request,
        tags: ['nightly', 'nightly', 'web'],
        metadata: { team: 'a' },
      },
    });
    log
      .start()
      .think([{ tool: 'echo', args: {} }])
      .intents()
      .fail('call-1', false);
    log.add('run_failed', { error: { code: 'tool_failed', message: 'echo failed for good' } });
    expect(summarize('run-f', fold(log.events))).toMatchObject({
      status: 'failed',
      lastError: { code: 'tool_failed', message: 'echo failed for good' },
      tags: ['nightly', 'web'],
      metadata: { team: 'a' },
      createdAt: log.events[0]!.meta.ts,
      updatedAt: log.events.at(-1)!.meta.ts,
    });
  });

  it('is defined for every valid history: a listable status and both times', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        const state = fold(events);
        const summary = summarize(events[0]!.meta.runId, state);
        expect(RunStatusSchema.safeParse(summary.status).success).toBe(true);
        expect(Date.parse(summary.createdAt)).toBeLessThanOrEqual(Date.parse(summary.updatedAt));
        expect(summary.pendingCalls).toBe(
          isTerminal(state.status)
            ? 0
            : state.calls.filter((c) => c.status === 'pending' || c.status === 'unknown').length,
        );
        expect(new Set(summary.tools)).toEqual(new Set(state.calls.map((c) => c.tool)));
      }),
      { numRuns: 200 },
    );
  });
});

describe('RunStateSchema', () => {
  it('describes every field of every folded state (parsing drops nothing)', () => {
    fc.assert(
      fc.property(arbValidHistory(), (events) => {
        const state = asJson(fold(events));
        // zod drops a "__proto__" key inside JSON values by design; that says nothing about the schema.
        fc.pre(!JSON.stringify(state).includes('"__proto__"'));
        expect(RunStateSchema.parse(state)).toEqual(state);
      }),
      { numRuns: 300 },
    );
  });
});
