import { createHash } from 'node:crypto';
import type { ChatMessage, JsonValue, PromptRecord } from '@dura/contracts';
import { canonicalJson, type CallState, type RunState } from '@dura/core';

/** A tool result as text: what the model reads, and what the log records (a reference for offloaded ones). */
export interface ResultText {
  model: string;
  record: string;
}

export interface Conversation {
  /** What the model is sent. */
  messages: ChatMessage[];
  /** What the thought records: only the messages new since the previous recorded input. */
  record: PromptRecord;
  /** A rough size of `messages` in tokens (4 characters each), for context and budget decisions. */
  estimatedTokens: number;
}

export const SUMMARY_PREFIX = 'Summary of the earlier steps of this run:\n';

function inputText(input: JsonValue | undefined): string {
  if (input === undefined) return 'Begin.';
  return typeof input === 'string' ? input : JSON.stringify(input);
}

/** The text of a resolved call's outcome; offloaded results come in through `resolved`. */
export function callResultText(call: CallState, resolved?: string): ResultText {
  if (call.status === 'failed' || call.status === 'unknown') {
    const text = `error ${call.error?.code ?? 'failed'}: ${call.error?.message ?? ''}`;
    return { model: text, record: text };
  }
  if (call.resultRef) {
    const ref = `[payload ${call.resultRef.uri} sha256=${call.resultRef.sha256} size=${call.resultRef.size}]`;
    return { model: resolved ?? ref, record: ref };
  }
  const text = JSON.stringify(call.result ?? null);
  return { model: text, record: text };
}

/**
 * The conversation of the next model call, built from the folded log alone: the system prompt, the run's
 * input, a recorded summary in place of the steps it covers, then per decision the model's message and its
 * calls' results. The record chains onto the previous call's input by hash, so each message is stored once.
 */
export function buildConversation(
  state: RunState,
  systemPrompt: string,
  resultText: (call: CallState) => ResultText,
): Conversation {
  const model: ChatMessage[] = [];
  const record: ChatMessage[] = [];
  const push = (forModel: ChatMessage, forRecord: ChatMessage = forModel) => {
    model.push(forModel);
    record.push(forRecord);
  };
  if (systemPrompt !== '') push({ role: 'system', content: systemPrompt });
  push({ role: 'user', content: inputText(state.request?.input) });
  const summary = state.summary;
  if (summary) push({ role: 'user', content: `${SUMMARY_PREFIX}${summary.text}` });

  const calls = new Map(state.calls.map((call) => [call.callId, call]));
  // Where each turn's messages start in `record`, to cut the part already recorded.
  const turnStarts: number[] = [];
  for (const turn of state.turns) {
    turnStarts.push(record.length);
    const turnCalls = turn.callIds.map((id) => calls.get(id)).filter((call) => call !== undefined);
    if (summary && turnCalls.every((call) => call.step <= summary.throughStep)) continue;
    push({
      role: 'assistant',
      ...(turn.content === undefined ? {} : { content: turn.content }),
      toolCalls: turnCalls.map((call) => ({ id: call.callId, name: call.tool, arguments: call.args })),
    });
    for (const call of turnCalls) {
      const text = resultText(call);
      const isError = call.status !== 'completed';
      const base = { role: 'tool' as const, toolCallId: call.callId, name: call.tool };
      push(
        { ...base, content: text.model, ...(isError ? { isError } : {}) },
        { ...base, content: text.record, ...(isError ? { isError } : {}) },
      );
    }
  }

  const previous = state.prompt;
  const summaryThrough = summary?.throughStep ?? null;
  const chained =
    previous !== null && previous.summaryThrough === summaryThrough && previous.turns <= state.turns.length;
  const from = chained ? (turnStarts[previous.turns] ?? record.length) : 0;
  const prefix = chained ? previous.hash : null;
  const messages = record.slice(from);
  const hash = promptHashOf(prefix, messages);
  const chars = model.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
  return { messages: model, record: { hash, prefix, messages }, estimatedTokens: Math.ceil(chars / 4) };
}

export function promptHashOf(prefix: string | null, messages: readonly ChatMessage[]): string {
  return createHash('sha256')
    .update(prefix ?? '')
    .update('\n')
    .update(canonicalJson(messages as unknown as JsonValue))
    .digest('hex');
}

/** The full input of a recorded call, rebuilt by walking the prefix chain of the run's recorded inputs. */
export function expandPrompt(record: PromptRecord, byHash: ReadonlyMap<string, PromptRecord>): ChatMessage[] {
  const parts: ChatMessage[][] = [record.messages];
  let prefix = record.prefix;
  while (prefix !== null) {
    const previous = byHash.get(prefix);
    if (!previous) throw new Error(`the recorded input ${prefix} this one builds on is not in the log`);
    parts.unshift(previous.messages);
    prefix = previous.prefix;
  }
  return parts.flat();
}
