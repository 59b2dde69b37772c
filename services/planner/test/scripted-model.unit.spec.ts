import { describe, expect, it } from 'vitest';
import type { ScriptedStep } from '@dura/contracts';
import { createScriptedModel, scriptedTurn } from '@dura/agents';
import type { PlanEntry } from '@dura/agents';
import { History, scriptedRequest } from './run-history';

const plan: ScriptedStep[] = [
  { tool: 'demo.build', args: { service: 'web', commit: '$input.commit' } },
  { tool: 'demo.test', args: { imageTag: '$steps.1.imageTag' } },
  {
    tool: 'demo.deploy',
    args: { imageTag: '$steps.1.imageTag', environment: 'staging', tests: '$steps.2.tests' },
  },
];
const input = { commit: 'abc1234def' };

/** What the scripted model decides for `history`, with the plan and input of its request. */
function turnFor(history: History) {
  const { agent, input: runInput } = history.request;
  if (agent.kind !== 'scripted') throw new Error('a scripted request is expected');
  return scriptedTurn(history.state(), agent.steps, agent.output, runInput);
}

describe('the scripted model', () => {
  it('asks for plan step 1 first, with $input references resolved', () => {
    const turn = turnFor(new History(scriptedRequest('run-1', plan, { input })));
    expect(turn.decision).toEqual({
      kind: 'tool_calls',
      calls: [{ callId: 'call-1', tool: 'demo.build', args: { service: 'web', commit: 'abc1234def' } }],
    });
    expect(turn).toMatchObject({
      model: { id: 'scripted' },
      finishReason: 'tool_calls',
      content: 'step 1 of 3: demo.build',
    });
  });

  it('moves through the plan in order, resolving $steps.N from recorded results', () => {
    const history = new History(scriptedRequest('run-1', plan, { input }))
      .requested('demo.build', { service: 'web', commit: 'abc1234def' })
      .completed({ imageTag: 'web:abc1234', digest: 'sha256:x' });
    expect(turnFor(history).decision).toEqual({
      kind: 'tool_calls',
      calls: [{ callId: 'call-2', tool: 'demo.test', args: { imageTag: 'web:abc1234' } }],
    });

    history.requested('demo.test', { imageTag: 'web:abc1234' }).completed({ passed: true, tests: 51 });
    expect(turnFor(history).decision).toEqual({
      kind: 'tool_calls',
      calls: [
        {
          callId: 'call-3',
          tool: 'demo.deploy',
          args: { imageTag: 'web:abc1234', environment: 'staging', tests: 51 },
        },
      ],
    });
  });

  it('completes with the last result after the last step when the plan names no output', () => {
    const history = new History(scriptedRequest('run-1', [{ tool: 'echo', args: { a: 1 } }]))
      .requested('echo', { a: 1 })
      .completed({ a: 1, echoed: true });
    const turn = turnFor(history);
    expect(turn.decision).toEqual({ kind: 'complete', output: { a: 1, echoed: true } });
    expect(turn).toMatchObject({ finishReason: 'stop', content: 'plan finished after 1 step' });
  });

  it('completes with the plan output, its references resolved', () => {
    const request = scriptedRequest('run-1', [{ tool: 'echo', args: { a: 1 } }], {
      output: { result: '$steps.1.a', commit: '$input.commit', fixed: 'text' },
      input,
    });
    const history = new History(request).requested('echo', { a: 1 }).completed({ a: 42 });
    expect(turnFor(history).decision).toEqual({
      kind: 'complete',
      output: { result: 42, commit: 'abc1234def', fixed: 'text' },
    });
  });

  it('completes without output for an empty plan', () => {
    expect(turnFor(new History(scriptedRequest('run-1', []))).decision).toEqual({ kind: 'complete' });
  });

  it('fails the run after a call failed for good, naming the step', () => {
    const history = new History(scriptedRequest('run-1', plan, { input }))
      .requested('demo.build', { service: 'web', commit: 'abc1234def' })
      .failed('registry unreachable');
    const turn = turnFor(history);
    expect(turn.decision).toEqual({
      kind: 'fail',
      error: { code: 'tool_failed', message: 'step 1 (demo.build) failed: registry unreachable' },
    });
    expect(turn.content).toBe('plan failed: step 1 (demo.build) failed: registry unreachable');
  });

  it('fails with bad_reference when a reference does not resolve', () => {
    const history = new History(scriptedRequest('run-1', plan, { input }))
      .requested('demo.build', { service: 'web', commit: 'abc1234def' })
      .completed({ digest: 'sha256:x' }); // no imageTag for step 2 to read
    expect(turnFor(history).decision).toEqual({
      kind: 'fail',
      error: {
        code: 'bad_reference',
        message: expect.stringContaining('$steps.1.imageTag: no field "imageTag"'),
      },
    });
    expect(turnFor(new History(scriptedRequest('run-1', plan))).decision).toMatchObject({
      kind: 'fail',
      error: { code: 'bad_reference', message: '$input.commit: the run has no input' },
    });
  });

  it('is the same decision through the Model door', async () => {
    const history = new History(scriptedRequest('run-1', plan, { input }));
    const turn = await createScriptedModel().decide({ state: history.state(), request: history.request });
    expect(turn).toEqual(turnFor(history));
  });
});

describe('a scripted agent plan with a parallel group', () => {
  const fanOut: PlanEntry[] = [
    {
      parallel: [
        { tool: 'demo.build', args: { service: 'cart', commit: '$input.commit' } },
        { tool: 'demo.build', args: { service: 'search', commit: '$input.commit' } },
      ],
    },
    { tool: 'demo.notify', args: { channel: '#releases', message: '$steps.2.imageTag' } },
  ];
  const turnAfter = (history: History) => scriptedTurn(history.state(), fanOut, undefined, input);

  it('asks for every call of the group in one decision, numbered one after another', () => {
    const turn = turnAfter(new History(scriptedRequest('run-p', [], { input })));
    expect(turn.decision).toEqual({
      kind: 'tool_calls',
      calls: [
        { callId: 'call-1', tool: 'demo.build', args: { service: 'cart', commit: 'abc1234def' } },
        { callId: 'call-2', tool: 'demo.build', args: { service: 'search', commit: 'abc1234def' } },
      ],
    });
    expect(turn.content).toBe('steps 1-2 of 3: demo.build, demo.build');
  });

  it('goes on after the group with the results of all its calls', () => {
    const history = new History(scriptedRequest('run-p', [], { input }))
      .requested('demo.build', { service: 'cart', commit: 'abc1234def' })
      .completed({ imageTag: 'cart:abc1234' })
      .requested('demo.build', { service: 'search', commit: 'abc1234def' })
      .completed({ imageTag: 'search:abc1234' });
    expect(turnAfter(history).decision).toEqual({
      kind: 'tool_calls',
      calls: [
        { callId: 'call-3', tool: 'demo.notify', args: { channel: '#releases', message: 'search:abc1234' } },
      ],
    });
  });

  it('refuses a recorded history that ends inside a group', () => {
    const history = new History(scriptedRequest('run-p', [], { input }))
      .requested('demo.build', { service: 'cart', commit: 'abc1234def' })
      .completed({ imageTag: 'cart:abc1234' });
    expect(() => turnAfter(history)).toThrow(
      /recorded 1 steps, which ends inside a parallel group .*steps 1-2/,
    );
  });
});
