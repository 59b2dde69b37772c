import { describe, expect, it } from 'vitest';
import type { ScriptedStep } from '@dura/contracts';
import { builtinRegistry } from '@dura/tools';
import { checkPlan } from '../src/index';
import { scriptedRequest } from './run-history';

const tools = builtinRegistry();
const check = (steps: ScriptedStep[]) => checkPlan(scriptedRequest('run-1', steps), tools);

describe('checkPlan', () => {
  it('accepts a plan of known tools with valid arguments and backward references', () => {
    expect(
      check([
        { tool: 'demo.build', args: { service: 'web', commit: 'abc1234' } },
        { tool: 'demo.test', args: { imageTag: '$steps.1.imageTag' } },
        { tool: 'demo.deploy', args: { imageTag: '$steps.1.imageTag', environment: 'staging' } },
      ]),
    ).toBeUndefined();
    expect(check([])).toBeUndefined();
  });

  it('names each unknown tool by its step, with the tools that exist', () => {
    const problem = check([
      { tool: 'echo', args: {} },
      { tool: 'demo.bild', args: { service: 'web' } },
    ]);
    expect(problem).toMatchObject({
      code: 'unknown_tool',
      message: 'the plan uses an unknown tool: "demo.bild"; the issues list the tools this deployment has',
    });
    expect(problem?.issues).toHaveLength(1);
    expect(problem?.issues[0]).toMatch(
      /^agent\.steps\.1\.tool: unknown tool "demo\.bild"; known tools: .*demo\.build/,
    );
  });

  it('names at most five unknown tools in the message; the issues keep every one', () => {
    const problem = check(Array.from({ length: 8 }, (_, i) => ({ tool: `nope.t${i}`, args: {} })));
    expect(problem?.message).toBe(
      'the plan uses unknown tools: "nope.t0", "nope.t1", "nope.t2", "nope.t3", "nope.t4" (and 3 more); the issues list the tools this deployment has',
    );
    expect(problem?.issues).toHaveLength(8);
  });

  it('reports invalid arguments of known tools as invalid_plan, path by path', () => {
    const problem = check([
      { tool: 'demo.build', args: { service: '', commit: 'abc' } },
      { tool: 'demo.deploy', args: { imageTag: 'web:1', environment: 'moon' } },
    ]);
    expect(problem?.code).toBe('invalid_plan');
    expect(problem?.message).toMatch(
      /^the plan has invalid steps: agent\.steps\.0: demo\.build args service: .*; agent\.steps\.0: demo\.build args commit: .*; agent\.steps\.1: demo\.deploy args environment: /,
    );
    expect(problem?.issues).toEqual([
      expect.stringMatching(/^agent\.steps\.0: demo\.build args service: /),
      expect.stringMatching(/^agent\.steps\.0: demo\.build args commit: /),
      expect.stringMatching(/^agent\.steps\.1: demo\.deploy args environment: /),
    ]);
  });

  it('leaves arguments holding references to the gateway, but checks where they point', () => {
    // Not a valid image tag as written; it is resolved before the gateway validates it.
    expect(
      check([
        { tool: 'echo', args: {} },
        { tool: 'demo.test', args: { imageTag: '$steps.1.tag' } },
      ]),
    ).toBeUndefined();
    const forward = check([
      { tool: 'demo.test', args: { imageTag: '$steps.2.imageTag' } },
      { tool: 'demo.build', args: { service: 'web', commit: 'abc1234' } },
    ]);
    expect(forward).toMatchObject({
      code: 'invalid_plan',
      issues: ['agent.steps.0.args: $steps.2.imageTag must reference an earlier step (1..0)'],
    });
    expect(check([{ tool: 'echo', args: { self: '$steps.1.x' } }])?.issues).toEqual([
      'agent.steps.0.args: $steps.1.x must reference an earlier step (1..0)',
    ]);
  });

  it('reports unknown tools first, carrying the other issues along', () => {
    const problem = check([
      { tool: 'nope', args: {} },
      { tool: 'demo.build', args: { service: 'web' } },
    ]);
    expect(problem?.code).toBe('unknown_tool');
    expect(problem?.issues[0]).toMatch(/^agent\.steps\.0\.tool: unknown tool "nope"/);
    expect(problem?.issues.slice(1)).toEqual([
      expect.stringMatching(/^agent\.steps\.1: demo\.build args commit: /),
    ]);
  });
});

describe('checkPlan with control tools', () => {
  const child = (steps: ScriptedStep[]) => ({ kind: 'scripted', steps });

  it('checks an inline child plan as the child’s own, with its own references', () => {
    expect(
      check([
        { tool: 'echo', args: { n: 1 } },
        {
          tool: 'dura.run_agent',
          args: {
            agent: child([
              { tool: 'echo', args: { a: 1 } },
              { tool: 'echo', args: { b: '$steps.1.a' } },
            ]),
            input: '$steps.1.n',
          },
        },
      ]),
    ).toBeUndefined();
    const problem = check([
      { tool: 'dura.run_agent', args: { agent: child([{ tool: 'demo.bild', args: {} }]) } },
    ]);
    expect(problem?.code).toBe('unknown_tool');
    expect(problem?.issues[0]).toMatch(
      /^agent\.steps\.0\.args\.agent\.steps\.0\.tool: unknown tool "demo\.bild"/,
    );
  });

  it('refuses control-tool arguments that can never be valid', () => {
    expect(
      check([{ tool: 'dura.sleep', args: { seconds: 1, until: '2030-01-01T00:00:00Z' } }])?.issues,
    ).toEqual(['agent.steps.0: dura.sleep args (root): give exactly one of "seconds" or "until"']);
  });
});
