import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { ForkEdit, NewEvent, RunEvent, ScriptedStep } from '@dura/contracts';
import { planFork } from '@dura/core';
import { RunLog } from '@dura/core/testing';
import { createSecretsBox, defineTool, isSecretEnvelope, ToolRegistry } from '@dura/tools';
import { secretCardTool } from '@dura/tools/testing';
import { guardForkEdit, redactForkEditBytes } from '../src/fork-edit-policy';

/** `shop.quote` declares its output, and its `coupon` field secret. */
const quote = defineTool({
  name: 'shop.quote',
  description: 'a price',
  input: z.object({ item: z.string() }),
  output: z.object({ price: z.number().nonnegative(), coupon: z.string().optional() }),
  safety: 'read_only',
  secrets: { result: ['coupon'] },
  execute: () => Promise.resolve({ price: 1 }),
});
const pay = secretCardTool();
const tools = new ToolRegistry([quote, pay]);
const box = createSecretsBox(`k1:${randomBytes(32).toString('base64')}`);

/** A source run: a quote (call-1), then nothing decided after it; its input passes `card` to pay's secret field. */
function source(): RunEvent[] {
  const steps: ScriptedStep[] = [
    { tool: 'shop.quote', args: { item: 'a' } },
    { tool: 'pay', args: { amount: 1, card: '$input.card' } },
  ];
  const log = new RunLog('src').request(steps, { card: { token: 'sealed-before' } });
  log.start();
  return log.think([steps[0]!]).intents().complete('call-1', { price: 100 }).events;
}

function planned(edit: ForkEdit, atSeq?: number): NewEvent[] {
  const events = source();
  const plan = planFork({
    source: events,
    atSeq: atSeq ?? events.at(-1)!.seq,
    runId: 'fork-1',
    ts: 'now',
    edit,
  });
  if (!plan.ok) throw new Error(plan.problem.message);
  return plan.events;
}

const completedOf = (events: NewEvent[]) => events.find((e) => e.type === 'tool_call_completed')!;

describe('guardForkEdit', () => {
  it('seals the secret fields of an edited result for the fork, as the gateway seals a real one', () => {
    const edit = { toolResult: { callId: 'call-1', output: { price: 5, coupon: 'SAVE50' } }, by: 'alice' };
    const guarded = guardForkEdit({ tools, secrets: box! }, planned(edit), edit);
    if (!guarded.ok) throw new Error(guarded.rejection.error.message);
    const result = completedOf(guarded.events).data as unknown as {
      result: { price: number; coupon: unknown };
    };
    expect(result.result.price).toBe(5);
    expect(isSecretEnvelope(result.result.coupon)).toBe(true);
    expect(box!.open(result.result.coupon as never, 'fork-1')).toBe('SAVE50');
    expect(guarded.sealed).toBe(true);
    expect(JSON.stringify(guarded.events)).not.toContain('SAVE50');
  });

  it('refuses a result that is not what the tool answers, with the issues', () => {
    const edit = { toolResult: { callId: 'call-1', output: { price: -3 } }, by: 'alice' };
    const guarded = guardForkEdit({ tools, secrets: box! }, planned(edit), edit);
    expect(guarded).toMatchObject({
      ok: false,
      rejection: {
        error: { code: 'invalid_tool_result' },
        issues: ['shop.quote result price: Too small: expected number to be >=0'],
      },
    });
  });

  it('refuses a secret it cannot seal (no key), rather than record it in clear', () => {
    const edit = { toolResult: { callId: 'call-1', output: { price: 5, coupon: 'SAVE50' } }, by: 'alice' };
    const guarded = guardForkEdit({ tools }, planned(edit), edit);
    expect(guarded).toMatchObject({ ok: false, rejection: { error: { code: 'secrets_key_missing' } } });
  });

  it('seals an edited input where a submitted input would be sealed', () => {
    const edit = { input: { card: { token: 'tok_new' } }, by: 'bob' };
    const events = source();
    const guarded = guardForkEdit({ tools, secrets: box! }, planned(edit, events[0]!.seq), edit);
    if (!guarded.ok) throw new Error(guarded.rejection.error.message);
    const { request } = guarded.events[0]!.data as { request: { input: { card: { token: unknown } } } };
    expect(isSecretEnvelope(request.input.card.token)).toBe(true);
    expect(guarded.sealed).toBe(true);
    expect(JSON.stringify(guarded.events)).not.toContain('tok_new');
  });

  it('refuses to edit the result of a tool this planner does not offer: it could check and seal nothing', () => {
    const edit = { toolResult: { callId: 'call-1', output: { price: 5 } }, by: 'alice' };
    const guarded = guardForkEdit({ tools: new ToolRegistry([pay]), secrets: box! }, planned(edit), edit);
    expect(guarded).toMatchObject({ ok: false, rejection: { error: { code: 'unknown_tool' } } });
  });

  it('leaves an edit without secrets as it is', () => {
    const edit = { toolResult: { callId: 'call-1', output: { price: 5 } }, by: 'alice' };
    const guarded = guardForkEdit({ tools, secrets: box! }, planned(edit), edit);
    expect(guarded).toMatchObject({ ok: true, sealed: false });
  });
});

describe('redactForkEditBytes (what a dead letter keeps of a fork request)', () => {
  const bytes = (body: unknown) => new TextEncoder().encode(JSON.stringify(body));
  it('hides every edited value, keeping the rest', () => {
    const body = {
      v: 2,
      sourceRunId: 's',
      atSeq: 3,
      edit: { input: { card: 'tok' }, toolResult: { callId: 'call-1', output: { coupon: 'SAVE' } }, by: 'a' },
    };
    const kept = JSON.parse(new TextDecoder().decode(redactForkEditBytes(bytes(body)))) as unknown;
    expect(kept).toEqual({
      ...body,
      edit: { input: '[secret]', toolResult: { callId: 'call-1', output: '[secret]' }, by: 'a' },
    });
  });

  it('has nothing to hide in a request without an edit, or in bytes that are not JSON', () => {
    expect(redactForkEditBytes(bytes({ v: 1, sourceRunId: 's', atSeq: 3 }))).toBeUndefined();
    expect(redactForkEditBytes(new TextEncoder().encode('{nope'))).toBeUndefined();
  });
});
