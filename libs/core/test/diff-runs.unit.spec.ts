import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { RunEvent } from '@dura/contracts';
import { diffRuns } from '../src/index';
import { RunLog, arbValidHistory, thoughtData } from '../src/testing';

const build = { tool: 'build.image', args: { repo: 'acme/web', ref: 'main' } };
const deploy = { tool: 'deploy.service', args: { env: 'staging' } };
const deployProd = { tool: 'deploy.service', args: { env: 'production' } };

/** A finished two-step run: build, then `second`, then completion with `output`. */
function twoSteps(runId: string, second = deploy, output: string = 'done'): RunLog {
  return new RunLog(runId)
    .request()
    .start()
    .think([build])
    .intents()
    .complete('call-1', { imageTag: 'web:1' })
    .think([second])
    .intents()
    .complete('call-2')
    .finish(output);
}

describe('diffRuns', () => {
  it('finds nothing between runs that decided the same, whatever their ids, keys, sequences and results', () => {
    const a = twoSteps('run-a').events;
    // Another run id (so other keys and event ids), a shared stream's gaps, and other tool results.
    const b = new RunLog('run-b', [3, 1])
      .request()
      .start()
      .think([build])
      .intents()
      .complete('call-1', { imageTag: 'web:2' }, 2)
      .think([deploy])
      .intents()
      .complete('call-2', { other: true })
      .finish('done').events;
    expect(diffRuns(a, b)).toBeNull();
  });

  it('points at the first thought whose tool arguments differ, on both sides', () => {
    const a = twoSteps('run-a').events;
    const b = twoSteps('run-b', deployProd).events;
    const thoughtA = a.filter((e) => e.type === 'thought')[1]!;
    const thoughtB = b.filter((e) => e.type === 'thought')[1]!;
    expect(diffRuns(a, b)).toEqual({
      step: 2,
      a: { seq: thoughtA.seq, type: 'thought', summary: 'tool_calls deploy.service {"env":"staging"}' },
      b: { seq: thoughtB.seq, type: 'thought', summary: 'tool_calls deploy.service {"env":"production"}' },
    });
  });

  it('compares intents too: an intent that differs from an equal thought is a divergence', () => {
    const a = twoSteps('run-a').events;
    const b = a.map((event): RunEvent =>
      event.type === 'tool_call_requested' && event.data.step === 2
        ? { ...event, data: { ...event.data, args: { env: 'qa' } } }
        : event,
    );
    const intent = a.find((e) => e.type === 'tool_call_requested' && e.data.step === 2)!;
    expect(diffRuns(a, b)).toEqual({
      step: 2,
      a: { seq: intent.seq, type: 'tool_call_requested', summary: 'step 2 deploy.service {"env":"staging"}' },
      b: { seq: intent.seq, type: 'tool_call_requested', summary: 'step 2 deploy.service {"env":"qa"}' },
    });
  });

  it('sees a different final decision: another output, or a failure instead of a completion', () => {
    const a = twoSteps('run-a').events;
    const other = twoSteps('run-b', deploy, 'elsewhere').events;
    expect(diffRuns(a, other)).toMatchObject({
      step: 3,
      a: { type: 'thought', summary: 'complete "done"' },
      b: { type: 'thought', summary: 'complete "elsewhere"' },
    });
    const failing = new RunLog('run-c').request().start().think([build]).intents().complete('call-1');
    const error = { code: 'gave_up', message: 'no deploy today' };
    failing.add('thought', thoughtData({ kind: 'fail', error }, 1)).add('run_failed', { error });
    expect(diffRuns(a, failing.events)).toMatchObject({
      step: 2,
      a: { summary: 'tool_calls deploy.service {"env":"staging"}' },
      b: { summary: 'fail gave_up: no deploy today' },
    });
  });

  it('reports a run that stopped deciding as the null side', () => {
    const a = twoSteps('run-a').events;
    const cancelled = new RunLog('run-b')
      .request()
      .start()
      .think([build])
      .intents()
      .add('run_cancelled', { reason: 'user' }).events;
    const next = a.filter((e) => e.type === 'thought')[1]!;
    expect(diffRuns(a, cancelled)).toEqual({
      step: 2,
      a: { seq: next.seq, type: 'thought', summary: 'tool_calls deploy.service {"env":"staging"}' },
      b: null,
    });
    expect(diffRuns(cancelled, a)).toMatchObject({ step: 2, a: null, b: { seq: next.seq } });
  });

  it('shortens long arguments in summaries', () => {
    const big = { tool: 'mail.send', args: { body: 'x'.repeat(500) } };
    const a = new RunLog('a').request().start().think([big]).events;
    const b = new RunLog('b').request().start().think([build]).events;
    const divergence = diffRuns(a, b);
    expect(divergence?.a?.summary.length).toBeLessThan(150);
    expect(divergence?.a?.summary.endsWith('…')).toBe(true);
  });

  it('is symmetric and finds nothing between a run and itself, over generated histories', () => {
    fc.assert(
      fc.property(arbValidHistory(), arbValidHistory(), (a, b) => {
        expect(diffRuns(a, a)).toBeNull();
        const ab = diffRuns(a, b);
        const ba = diffRuns(b, a);
        expect(ba === null ? null : { step: ba.step, a: ba.b, b: ba.a }).toEqual(ab);
      }),
      { numRuns: 100 },
    );
  });
});
