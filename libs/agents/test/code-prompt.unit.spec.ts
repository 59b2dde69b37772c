// What a code agent's ctx.model calls record as their prompts: content-addressed like a JSON agent's (only
// what is new since the call it continues), so the conversation can be read back from the log, and a replay
// of a log recorded before prompts were still matches it.
import { describe, expect, it } from 'vitest';
import { defineAgent, type ModelAnswer } from '@dura/code-agents';
import { decodeJournal, encodeJournal } from '@dura/code-agents/engine';
import type { ChatMessage, JsonObject, PromptRecord, RunEvent } from '@dura/contracts';
import { defineTool, ToolRegistry } from '@dura/tools';
import * as z from 'zod';
import {
  createScriptedModel,
  expandPrompt,
  promptHashOf,
  replayModelFor,
  replayRun,
  withCodeAgents,
} from '../src/index';
import { chainedPrompt } from '../src/agents/code-prompt';
import { simulateRun } from '../src/testing';
import { request } from './replay-code-support';

const system: ChatMessage = { role: 'system', content: 'Act.' };
const user: ChatMessage = { role: 'user', content: 'Go' };
const asked: ChatMessage = {
  role: 'assistant',
  content: '',
  toolCalls: [{ id: 'm1', name: 'pay.charge', arguments: { amount: 1 } }],
};
const result: ChatMessage = { role: 'tool', toolCallId: 'm1', name: 'pay.charge', content: '{"ok":true}' };

describe('chainedPrompt', () => {
  it('given no earlier prompt: the whole conversation, a chain of its own', () => {
    expect(chainedPrompt([system, user], [])).toEqual({
      hash: promptHashOf(null, [system, user]),
      prefix: null,
      messages: [system, user],
    });
  });

  it('given an earlier prompt this one continues: only the new messages, chained onto it', () => {
    const first = chainedPrompt([system, user], []);
    const other = chainedPrompt([{ role: 'user', content: 'Classify' }], [first]);
    const second = chainedPrompt([system, user, asked, result], [first, other]);
    expect(second).toEqual({
      hash: promptHashOf(first.hash, [asked, result]),
      prefix: first.hash,
      messages: [asked, result],
    });
    expect(other.prefix).toBeNull();
    const byHash = new Map([first, other, second].map((r) => [r.hash, r]));
    expect(expandPrompt(second, byHash)).toEqual([system, user, asked, result]);
    // The longest earlier start wins; a same request asked again chains onto the latest, adding nothing.
    const third = chainedPrompt([system, user, asked, result], [first, second]);
    expect(third).toMatchObject({ prefix: second.hash, messages: [] });
    // An earlier prompt that differs anywhere is no start of this one.
    expect(chainedPrompt([system, { role: 'user', content: 'Stop' }], [first]).prefix).toBeNull();
  });
});

describe('a code agent run records its ctx.model prompts', () => {
  const answer = (q: JsonObject): ModelAnswer => {
    const messages = q['messages'] as ChatMessage[];
    const looping = messages[0]?.content === 'Act.';
    const done = messages.some((m) => m.role === 'tool');
    return {
      content: looping ? (done ? 'charged' : '') : 'plan: charge 1',
      ...(looping && !done
        ? { toolCalls: [{ id: 'm1', name: 'pay.charge', arguments: { amount: 1 } }] }
        : {}),
      usage: { inputTokens: 10, outputTokens: 3 },
      model: { id: 'fake-1', promptVersion: '1' },
      finishReason: looping && !done ? 'tool_calls' : 'stop',
    };
  };
  const agent = defineAgent({
    name: 'looper',
    version: '1',
    model: { provider: 'openai', model: 'fake-1', maxTokens: 50 },
    tools: ['pay.charge'],
    async run(ctx) {
      const plan = await ctx.model({ system: 'Plan.', prompt: 'What to do?' });
      const done = await ctx.loop({
        system: 'Act.',
        prompt: plan.content,
        tools: ['pay.charge'],
        maxTurns: 3,
      });
      return done.text;
    },
  });

  const tools = new ToolRegistry([
    defineTool({
      name: 'pay.charge',
      description: 'charges a card',
      input: z.object({ amount: z.number() }),
      safety: 'idempotent',
      execute: () => Promise.resolve(null),
    }),
  ]);
  const planner = withCodeAgents({
    agents: [agent],
    base: createScriptedModel(),
    tools,
    answer: (q) => Promise.resolve(answer(q)),
  });
  const replayOf = (events: RunEvent[]) =>
    replayRun({ events, model: replayModelFor(events, { codeAgents: [agent], tools }) });

  const promptsOf = (events: readonly RunEvent[]): PromptRecord[] =>
    events.flatMap((e) =>
      e.type === 'thought'
        ? decodeJournal(e.data.content).flatMap((entry) => (entry.k === 'model' && entry.p ? [entry.p] : []))
        : [],
    );

  it('given a plan call and a tool loop: two chains, the loop turn recording only what it added', async () => {
    const run = await simulateRun(request('prompts-1', 'looper'), planner);
    expect(run.events.at(-1)).toMatchObject({ type: 'run_completed', data: { output: 'charged' } });
    const [plan, turn1, turn2] = promptsOf(run.events);
    expect(plan).toMatchObject({
      prefix: null,
      messages: [
        { role: 'system', content: 'Plan.' },
        { role: 'user', content: 'What to do?' },
      ],
    });
    expect(turn1).toMatchObject({
      prefix: null,
      messages: [{ content: 'Act.' }, { content: 'plan: charge 1' }],
    });
    expect(turn2?.prefix).toBe(turn1?.hash);
    expect(turn2?.messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
    const byHash = new Map(promptsOf(run.events).map((r) => [r.hash, r]));
    expect(expandPrompt(turn2!, byHash)).toHaveLength(4);

    expect(await replayOf(run.events)).toMatchObject({ ok: true, checked: run.events.length });
  });

  it('given a log recorded before prompts were: replay still matches it, and adds none', async () => {
    const run = await simulateRun(request('prompts-old', 'looper'), planner);
    const old = run.events.map((e): RunEvent => {
      if (e.type !== 'thought') return e;
      const entries = decodeJournal(e.data.content).map((entry) =>
        entry.k === 'model' ? { k: entry.k, h: entry.h, a: entry.a } : entry,
      );
      return { ...e, data: { ...e.data, content: encodeJournal(entries) } };
    });
    expect(run.events.at(-1)?.type).toBe('run_completed');
    expect(promptsOf(old)).toEqual([]);
    expect(await replayOf(old)).toMatchObject({ ok: true, checked: old.length });
  });
});
