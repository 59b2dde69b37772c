import { describe, expect, it } from 'vitest';
import type { Ctx, ModelCall } from '@dura/code-agents';
import { durable } from '../src/index';
import { scriptedModel } from './scripted-language-model';

/** A ctx that only keeps the call it is handed, as the engine parks it for the planner. */
function parkingCtx(): { ctx: Ctx; parked: () => ModelCall } {
  let parked: ModelCall | undefined;
  const ctx = {
    runId: 'run-1',
    tool: () => Promise.reject(new Error('no tools here')),
    modelCall: (call: ModelCall) => {
      parked = call;
      return new Promise<never>(() => undefined);
    },
  } as unknown as Ctx;
  return {
    ctx,
    parked: () => {
      if (!parked) throw new Error('no model call was parked');
      return parked;
    },
  };
}

describe("the planner's abort signal", () => {
  it('given the planner no longer wants an answer, when the call is made, then the provider sees the abort and it is not attempted again', async () => {
    const seen: (AbortSignal | undefined)[] = [];
    const model = scriptedModel(() => ({ text: 'late' }));
    const inner = model.doGenerate.bind(model);
    model.doGenerate = (options) => {
      seen.push(options.abortSignal);
      if (options.abortSignal?.aborted) return Promise.reject(new DOMException('aborted', 'AbortError'));
      return inner(options);
    };
    const { ctx, parked } = parkingCtx();
    void durable(ctx, model).doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
    });
    await new Promise((resolve) => setImmediate(resolve));

    const superseded = new AbortController();
    superseded.abort(new Error('another replica recorded the decision'));
    await expect(parked().invoke(undefined, superseded.signal)).rejects.toMatchObject({
      code: 'model_unavailable',
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.aborted).toBe(true);
    // Without the signal the same parked call answers.
    await expect(parked().invoke()).resolves.toMatchObject({ content: 'late' });
  });
});
