import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretsBox, isSecretEnvelope, ToolRegistry } from '@dura/tools';
import { redactRequest, redactRequestBytes } from '../src/redact-request';
import { SecretInChildPlan, sealDecision, sealRequest } from '../src/seal-request';
import { secretCardTool } from '@dura/tools/testing';

const pay = secretCardTool();
const tools = new ToolRegistry([pay]);
const box = createSecretsBox(`k1:${randomBytes(32).toString('base64')}`);

const request = (steps: unknown[], input?: unknown) =>
  ({
    v: 1,
    runId: 'r1',
    agent: { kind: 'scripted', steps },
    ...(input === undefined ? {} : { input }),
  }) as never;

describe('redactRequest (what a dead letter keeps)', () => {
  it('hides plan secrets and the input parts a step passes to a secret field, keeping references', () => {
    const body = request(
      [
        { tool: 'pay', args: { amount: 1, card: { token: 'tok_plan' } } },
        { tool: 'pay', args: { amount: 2, card: '$input.card' } },
      ],
      { card: { token: 'tok_input' }, note: 'kept' },
    );
    const redacted = redactRequest(body, tools) as unknown as {
      agent: { steps: { args: { card: unknown } }[] };
      input: unknown;
    };
    expect(JSON.stringify(redacted)).not.toMatch(/tok_/);
    expect(redacted.agent.steps[0]!.args.card).toEqual({ token: '[secret]' });
    expect(redacted.agent.steps[1]!.args.card).toBe('$input.card');
    expect(redacted.input).toEqual({ card: { token: '[secret]' }, note: 'kept' });
  });

  it('reaches into a child run inline plan and input, and into bodies that fail the schema', () => {
    const child = { kind: 'scripted', steps: [{ tool: 'pay', args: { amount: 1, card: '$input.c' } }] };
    const body = {
      runId: 'x',
      tenant: 42,
      agent: {
        kind: 'scripted',
        steps: [{ tool: 'dura.run_agent', args: { agent: child, input: { c: { token: 'tok_child' } } } }],
      },
    };
    const bytes = redactRequestBytes(new TextEncoder().encode(JSON.stringify(body)), tools);
    expect(new TextDecoder().decode(bytes)).toContain('[secret]');
    expect(new TextDecoder().decode(bytes)).not.toContain('tok_child');
  });

  it('returns the body itself when it holds no secret (nothing to erase), and nothing for bytes that are not JSON', () => {
    const body = request([{ tool: 'pay', args: { amount: 1, card: '$input.card' } }]);
    expect(redactRequest(body, tools)).toBe(body);
    expect(redactRequestBytes(new TextEncoder().encode('{not json'), tools)).toBeUndefined();
  });
});

describe('sealRequest', () => {
  it('seals plan and input secrets, and a sealed request seals to itself (a requeued copy)', () => {
    const body = request([{ tool: 'pay', args: { amount: 2, card: '$input.card' } }], {
      card: { token: 'tok_in' },
    });
    const first = sealRequest(body, tools, box);
    expect(first.changed).toBe(true);
    const input = (first.request as unknown as { input: { card: { token: unknown } } }).input;
    expect(isSecretEnvelope(input.card.token)).toBe(true);
    const again = sealRequest(first.request, tools, box);
    expect(again).toEqual({ request: first.request, changed: false });
  });

  it('refuses a child run given a secret in clear, which the parent log could not seal for it', () => {
    const child = {
      kind: 'scripted',
      steps: [{ tool: 'pay', args: { amount: 1, card: { token: 'tok_c' } } }],
    };
    const body = request([{ tool: 'dura.run_agent', args: { agent: child } }]);
    expect(() => sealRequest(body, tools, box)).toThrow(SecretInChildPlan);
    const plain = request([{ tool: 'dura.run_agent', args: { agent: { kind: 'scripted', steps: [] } } }]);
    expect(sealRequest(plain, tools, box).changed).toBe(false);
  });

  it("seals a child plan a model wrote with a secret, for the parent's run (the log never holds it in clear)", () => {
    const child = {
      kind: 'scripted',
      steps: [{ tool: 'pay', args: { amount: 1, card: '$input.card' } }],
    };
    const decision = {
      kind: 'tool_calls',
      calls: [
        { callId: 'c1', tool: 'dura.run_agent', args: { agent: child, input: { card: { token: 'tok_m' } } } },
      ],
    } as never;
    const sealed = sealDecision(decision, tools, box, 'parent-run');
    expect(JSON.stringify(sealed)).not.toContain('tok_m');
    const args = (sealed as unknown as { calls: { args: { input: { card: { token: unknown } } } }[] })
      .calls[0]!.args;
    expect(isSecretEnvelope(args.input.card.token)).toBe(true);
    // Sealing again changes nothing (a re-decided step gets the same record).
    expect(sealDecision(sealed, tools, box, 'parent-run')).toBe(sealed);
  });
});
