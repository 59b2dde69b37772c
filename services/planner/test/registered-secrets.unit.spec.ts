// Registered agents' runs (the only runs a production planner takes, inline plans off): the input paths that
// hold secrets, what the intake seals, and what a dead letter keeps.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { InputSecrets } from '@dura/agents';
import type { ScriptedStep } from '@dura/contracts';
import { createSecretsBox, isSecretEnvelope, SecretsKeyMissing, ToolRegistry } from '@dura/tools';
import { redactRequest } from '../src/redact-request';
import { SecretInChildPlan, sealDecision, sealRequest } from '../src/seal-request';
import { registeredSecrets } from '../src/secret-inputs';
import { subjectMatches } from '../src/event-secrets';
import { secretCardTool } from '@dura/tools/testing';

const pay = secretCardTool();
const tools = new ToolRegistry([pay]);
const box = createSecretsBox(`k1:${randomBytes(32).toString('base64')}`);

/** Agents as a registry serves them: `name@version` (the newest is the last listed of a name). */
function given(agents: Record<string, InputSecrets>) {
  return registeredSecrets(
    {
      inputSecrets: ({ name, version }) => {
        const versions = Object.keys(agents).filter((key) => key.startsWith(`${name}@`));
        const key = version === undefined ? versions.at(-1) : `${name}@${version}`;
        return key === undefined ? undefined : agents[key];
      },
    },
    tools,
  );
}
const plan = (...steps: ScriptedStep[]): InputSecrets => ({ declared: [], plan: steps });
const declared = (...paths: string[]): InputSecrets => ({ declared: paths, plan: [] });
const run = (name: string, input: unknown, version?: string) =>
  ({
    v: 1,
    runId: 'r1',
    agent: { kind: 'agent', name, ...(version ? { version } : {}) },
    input,
  }) as never;
const inputOf = (request: unknown) => (request as { input: Record<string, unknown> }).input;
const card = (token: string) => ({ card: { token }, note: 'kept' });

describe('the secret inputs of a registered agent', () => {
  it('follow its plan from "$input" references to secret fields, and add what it declares', () => {
    const registered = given({
      'pay-card@1': plan({ tool: 'pay', args: { amount: 1, card: '$input.card' } }),
      'pay-tok@1': plan({ tool: 'pay', args: { amount: 1, card: { token: '$input.t' } } }),
      'whole@1': plan({ tool: 'pay', args: { amount: 1, card: { token: '$input' } } }),
      'llm@1': declared('card.token', 'cards.*.token'),
      'plain@1': plan({ tool: 'pay', args: { amount: 1, card: { token: 'tok_in_plan' } } }),
    });
    expect(registered({ name: 'pay-card' })).toEqual(['card.token']);
    expect(registered({ name: 'pay-tok' })).toEqual(['t']);
    expect(registered({ name: 'whole' })).toEqual(['']);
    expect(registered({ name: 'llm' })).toEqual(['card.token', 'cards.*.token']);
    expect(registered({ name: 'plain' })).toEqual([]);
    expect(registered({ name: 'unknown' })).toBeUndefined();
  });

  it("count a child run's secret inputs, and end where an agent's plan starts itself", () => {
    const registered = given({
      'child@1': declared('card.token'),
      'parent@1': plan({
        tool: 'dura.run_agent',
        args: { agent: { kind: 'agent', name: 'child' }, input: { card: '$input.payment' } },
      }),
      'loop@1': plan(
        { tool: 'dura.run_agent', args: { agent: { kind: 'agent', name: 'loop' }, input: '$input' } },
        { tool: 'pay', args: { amount: 1, card: '$input.card' } },
      ),
    });
    expect(registered({ name: 'parent' })).toEqual(['payment.token']);
    expect(registered({ name: 'loop' })).toEqual(['card.token']);
  });
});

describe('sealRequest of a registered agent', () => {
  const registered = given({
    'pay-card@1': plan({ tool: 'pay', args: { amount: 1, card: '$input.card' } }),
    'pay-card@2': declared('other'),
    'child@1': declared('card.token'),
  });

  it('seals the secret inputs of the version named, else of the newest; a sealed request seals to itself', () => {
    const v1 = sealRequest(run('pay-card', card('tok_1'), '1'), tools, box, { registered });
    expect(v1.changed).toBe(true);
    expect(isSecretEnvelope((inputOf(v1.request)['card'] as { token: unknown }).token)).toBe(true);
    expect(inputOf(v1.request)['note']).toBe('kept');
    expect(sealRequest(v1.request, tools, box, { registered })).toEqual({
      request: v1.request,
      changed: false,
    });
    // Version 2 (the newest) takes `other` as secret, and passes no card to a tool.
    const newest = sealRequest(run('pay-card', { ...card('tok_2'), other: 'tok_o' }), tools, box, {
      registered,
    });
    expect(JSON.stringify(newest.request)).toContain('tok_2');
    expect(JSON.stringify(newest.request)).not.toContain('tok_o');
  });

  it('refuses rather than records in clear when no key is set', () => {
    expect(() => sealRequest(run('pay-card', card('tok_1'), '1'), tools, undefined, { registered })).toThrow(
      SecretsKeyMissing,
    );
    // Nothing at a secret field: nothing to seal, no key needed.
    expect(sealRequest(run('pay-card', { note: 'x' }, '1'), tools, undefined, { registered }).changed).toBe(
      false,
    );
  });

  it('refuses an inline plan handing a registered child a secret in clear; seals one a model wrote', () => {
    const child = { agent: { kind: 'agent', name: 'child' }, input: card('tok_c') };
    const inline = {
      v: 1,
      runId: 'r1',
      agent: { kind: 'scripted', steps: [{ tool: 'dura.run_agent', args: child }] },
    } as never;
    expect(() => sealRequest(inline, tools, box, { registered })).toThrow(SecretInChildPlan);
    const decision = { kind: 'tool_calls', calls: [{ callId: 'c1', tool: 'dura.run_agent', args: child }] };
    const sealed = sealDecision(decision as never, tools, box, 'parent', registered);
    expect(JSON.stringify(sealed)).not.toContain('tok_c');
    expect(JSON.stringify(sealed)).toContain('kept');
  });
});

describe('redactRequest of a registered agent (what a dead letter keeps)', () => {
  const registered = given({ 'pay-card@1': declared('card.token') });

  it('hides its secret inputs, for a version not served too; an unknown agent has none to hide', () => {
    const redacted = redactRequest(run('pay-card', card('tok_1')), tools, registered);
    expect(inputOf(redacted)).toEqual({ card: { token: '[secret]' }, note: 'kept' });
    const unknownVersion = redactRequest(run('pay-card', card('tok_1'), '9'), tools, registered);
    expect(JSON.stringify(unknownVersion)).not.toContain('tok_1');
    const body = run('other', card('tok_1'));
    expect(redactRequest(body, tools, registered)).toBe(body);
  });

  it('reaches a request that fails the schema', () => {
    const body = { v: 1, tenant: 42, agent: { kind: 'agent', name: 'pay-card' }, input: card('tok_1') };
    expect(JSON.stringify(redactRequest(body, tools, registered))).not.toContain('tok_1');
  });
});

describe('subjectMatches (which triggers read an event)', () => {
  it('follows NATS wildcards', () => {
    expect(subjectMatches('dura.event.cards.>', 'dura.event.cards.paid')).toBe(true);
    expect(subjectMatches('dura.event.cards.>', 'dura.event.cards')).toBe(false);
    expect(subjectMatches('dura.event.*.paid', 'dura.event.cards.paid')).toBe(true);
    expect(subjectMatches('dura.event.*', 'dura.event.cards.paid')).toBe(false);
    expect(subjectMatches('dura.event.cards', 'dura.event.cards')).toBe(true);
    expect(subjectMatches('dura.event.cards', 'dura.event.other')).toBe(false);
  });
});
