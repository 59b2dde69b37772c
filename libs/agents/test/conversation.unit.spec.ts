import { describe, expect, it } from 'vitest';
import type { PromptRecord } from '@dura/contracts';
import { fold, type RunState } from '@dura/core';
import { RunLog } from '@dura/core/testing';
import { buildConversation, callResultText, expandPrompt, SUMMARY_PREFIX } from '../src/agents/conversation';

const SYSTEM = 'You are a careful research agent.';

/** One decision: the conversation for it, recorded in a thought asking for one call, and the call's result. */
function decideOnce(log: RunLog, result: unknown): PromptRecord {
  const state = fold(log.events);
  const conversation = buildConversation(state, SYSTEM, (call) => callResultText(call));
  const step = log.stepCount + 1;
  const callId = `call-${step}`;
  log.add('thought', {
    step: log.stepCount,
    model: { id: 'm', promptVersion: 'p' },
    content: `looking up item ${step}`,
    decision: { kind: 'tool_calls', calls: [{ callId, tool: 'http.request', args: { page: step } }] },
    usage: { inputTokens: 1, outputTokens: 1 },
    finishReason: 'tool_calls',
    prompt: conversation.record,
  });
  log.add('tool_call_requested', {
    callId,
    step,
    tool: 'http.request',
    args: { page: step },
    idempotencyKey: `k${step}`,
  });
  (log as unknown as { steps: number }).steps = step;
  log.add('tool_call_completed', {
    callId,
    idempotencyKey: `k${step}`,
    result: result as never,
    attempt: 1,
    deduped: false,
    durationMs: 1,
  });
  return conversation.record;
}

describe('the conversation rebuilt from the log', () => {
  it('starts with the system prompt and the input, then each decision and its results', () => {
    const log = new RunLog().request([], { question: 'price of X?' }).start();
    const first = decideOnce(log, { price: 3 });
    expect(first.prefix).toBeNull();
    expect(first.messages).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: '{"question":"price of X?"}' },
    ]);
    const next = buildConversation(fold(log.events), SYSTEM, (call) => callResultText(call));
    expect(next.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: 'looking up item 1',
        toolCalls: [{ id: 'call-1', name: 'http.request', arguments: { page: 1 } }],
      },
      { role: 'tool', toolCallId: 'call-1', name: 'http.request', content: '{"price":3}' },
    ]);
  });

  it('records only what is new, chained by hash, and the chain expands to the whole input', () => {
    const log = new RunLog().request([], 'go').start();
    const records: PromptRecord[] = [];
    for (let i = 0; i < 5; i += 1) records.push(decideOnce(log, { item: i }));
    for (let i = 1; i < records.length; i += 1) {
      expect(records[i]!.prefix).toBe(records[i - 1]!.hash);
      expect(records[i]!.messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
    }
    const state: RunState = fold(log.events);
    const latest = buildConversation(state, SYSTEM, (call) => callResultText(call));
    const byHash = new Map(records.map((r) => [r.hash, r]));
    expect(expandPrompt(latest.record, byHash)).toEqual(latest.messages);
    expect(() => expandPrompt(latest.record, new Map())).toThrow(/is not in the log/);
  });

  it('stores a growing conversation in linear, not quadratic, space', () => {
    const bytesFor = (decisions: number) => {
      const log = new RunLog().request([], 'go').start();
      let bytes = 0;
      for (let i = 0; i < decisions; i += 1)
        bytes += JSON.stringify(decideOnce(log, { text: 'x'.repeat(500) })).length;
      return bytes;
    };
    const ratio = bytesFor(100) / bytesFor(10);
    expect(ratio).toBeGreaterThan(8);
    expect(ratio).toBeLessThan(12);
  });

  it('puts a recorded summary in place of the steps it covers and restarts the chain', () => {
    const log = new RunLog().request([], 'go').start();
    for (let i = 0; i < 4; i += 1) decideOnce(log, { item: i });
    log.add('context_summarized', {
      throughStep: 2,
      summary: 'items 0 and 1 were fetched',
      model: { id: 'm', promptVersion: 'p' },
      usage: { inputTokens: 10, outputTokens: 5 },
    });
    const conversation = buildConversation(fold(log.events), SYSTEM, (call) => callResultText(call));
    expect(conversation.record.prefix).toBeNull();
    expect(conversation.messages[2]).toEqual({
      role: 'user',
      content: `${SUMMARY_PREFIX}items 0 and 1 were fetched`,
    });
    const assistants = conversation.messages.filter((m) => m.role === 'assistant');
    expect(assistants.map((m) => m.content)).toEqual(['looking up item 3', 'looking up item 4']);
  });

  it('sends an offloaded result to the model but records only its reference', () => {
    const log = new RunLog().request([], 'go').start();
    decideOnce(log, null);
    const state = fold(log.events);
    const ref = { uri: 'dura-obj://dura_payloads/' + 'a'.repeat(64), sha256: 'a'.repeat(64), size: 70_000 };
    const call = { ...state.calls[0]!, resultRef: ref };
    const text = callResultText(call, '{"big":true}');
    expect(text.model).toBe('{"big":true}');
    expect(text.record).toContain(ref.uri);
  });
});
