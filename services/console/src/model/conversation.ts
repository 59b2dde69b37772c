import type { ChatMessage, PayloadRef, PromptRecord, RunEvent, Usage } from '@dura/contracts';
import type { AnswerText } from '@dura/core';
import {
  callOutcomes,
  modelCallsOf,
  payloadInText,
  requestedAt,
  runFailure,
  type AskedCall,
  type CallOutcome,
  type ModelCall,
} from './model-calls';

/** A tool call as the chat shows it: its arguments, the intent that recorded them, and whether its result is shown. */
export interface ChatCallView extends AskedCall {
  /** The `tool_call_requested` of a JSON agent's call. */
  requestedSeq?: number;
  /** The conversation shows the call's result (a `tool` item with its `callId`). */
  answered: boolean;
}

/** What a recorded answer cost: the model, its tokens and dollars, and why it stopped. */
export interface AnswerFacts {
  model: string;
  usage: Usage;
  costUsd?: number;
  finishReason: string;
}

/** One bubble of the chat; `seq` is the event it was read from (the timeline's row). */
export type ChatItem =
  | { role: 'system' | 'user'; content: string; seq: number }
  | {
      role: 'assistant';
      content?: string;
      toolCalls: ChatCallView[];
      seq: number;
      /** Set on the model's recorded answers; absent on an assistant message the caller wrote into a prompt. */
      answer?: AnswerFacts;
    }
  | {
      role: 'tool';
      callId: string;
      name: string;
      content: string;
      isError: boolean;
      seq: number;
      payload?: PayloadRef;
    }
  | { role: 'error'; code: string; message: string; seq: number };

/** The messages of one chain of model calls (each call's prompt continuing the previous one's). */
export interface Conversation {
  /** The hash of the chain's first prompt; `unrecorded` for answers recorded without their prompt. */
  key: string;
  /** How many model calls the chain holds. */
  calls: number;
  items: ChatItem[];
}

/**
 * The model conversations of a run, rebuilt from its events alone: each model call's recorded prompt (only
 * what is new since the call it continues), its answer with tokens and cost, the results of the tool calls
 * it asked for as their events recorded them (so they show before the next call is made), and the failure
 * the run ended with. Calls are grouped by the chain their prompts form: a JSON agent has one (a new one
 * after its context was summarized), a code agent one per conversation its code held with the model.
 */
export function buildConversations(events: readonly RunEvent[]): Conversation[] {
  const calls = modelCallsOf(events);
  // A run that asked no model (most of a long scripted run's events) costs one pass over its thoughts.
  const outcomes = calls.length === 0 ? new Map<string, CallOutcome>() : callOutcomes(events);
  const requested = calls.length === 0 ? new Map<string, number>() : requestedAt(events);
  const rootOf = chainRoots(calls);
  const chains = new Map<string, ModelCall[]>();
  for (const call of calls) {
    const key = call.prompt ? rootOf(call.prompt) : 'unrecorded';
    const chain = chains.get(key);
    if (chain) chain.push(call);
    else chains.set(key, [call]);
  }
  const conversations = [...chains].map(([key, chain]) => ({
    key,
    calls: chain.length,
    items: chatOf(chain, outcomes, requested),
    last: chain.at(-1)?.seq ?? 0,
  }));
  const failure = runFailure(events);
  if (failure) {
    const { code, message } = failure.error;
    const item: ChatItem = { role: 'error', code, message, seq: failure.seq };
    const latest = conversations.reduce<(typeof conversations)[number] | undefined>(
      (found, c) => (found === undefined || c.last > found.last ? c : found),
      undefined,
    );
    // A run whose first model call failed talked to a model too: its chat is the error.
    if (latest) latest.items.push(item);
    else if (failure.error.code.startsWith('model_'))
      conversations.push({ key: 'failed', calls: 0, items: [item], last: failure.seq });
  }
  return conversations.map(({ key, calls: n, items }) => ({ key, calls: n, items: linkResults(items) }));
}

/**
 * The first prompt of the chain each recorded prompt continues (the earliest one the run holds), each
 * found once: a run of a thousand calls is not walked a thousand times.
 */
function chainRoots(calls: readonly ModelCall[]): (record: PromptRecord) => string {
  const byHash = new Map<string, PromptRecord>();
  for (const call of calls) if (call.prompt) byHash.set(call.prompt.hash, call.prompt);
  const roots = new Map<string, string>();
  return (record) => {
    const path = new Set<string>();
    let current = record;
    let root: string | undefined;
    for (;;) {
      root = roots.get(current.hash);
      if (root !== undefined) break;
      path.add(current.hash);
      const previous = current.prefix === null ? undefined : byHash.get(current.prefix);
      // A chain that starts before what the run holds (or loops) is rooted at its earliest known prompt.
      if (!previous || path.has(previous.hash)) {
        root = current.hash;
        break;
      }
      current = previous;
    }
    for (const hash of path) roots.set(hash, root);
    return root;
  };
}

/** One chain's chat: per call, what its prompt added that the chat does not show yet, then its answer. */
function chatOf(
  chain: readonly ModelCall[],
  outcomes: ReadonlyMap<string, CallOutcome>,
  requested: ReadonlyMap<string, number>,
): ChatItem[] {
  const items: ChatItem[] = [];
  const askedIds = new Set<string>();
  const answeredTexts = new Set<string>();
  const resultIds = new Set<string>();
  const pending = (calls: readonly AskedCall[]): ChatCallView[] =>
    calls.map((call): ChatCallView => {
      const at = requested.get(call.id);
      return { ...call, ...(at === undefined ? {} : { requestedSeq: at }), answered: false };
    });
  // A message the chat already shows: an earlier answer sent back as history, or a result read from events.
  const shown = (message: ChatMessage): boolean => {
    if (message.role === 'tool') return resultIds.has(message.toolCallId);
    if (message.role !== 'assistant') return false;
    const ids = message.toolCalls?.map((call) => call.id) ?? [];
    return ids.length > 0
      ? ids.every((id) => askedIds.has(id))
      : message.content !== undefined && answeredTexts.has(message.content);
  };
  for (const call of chain) {
    for (const message of call.prompt?.messages ?? []) {
      if (shown(message)) continue;
      if (message.role === 'tool') {
        const payload = payloadInText(message.content);
        resultIds.add(message.toolCallId);
        items.push({
          role: 'tool',
          callId: message.toolCallId,
          name: message.name,
          content: payload ? '' : message.content,
          isError: message.isError === true,
          seq: outcomes.get(message.toolCallId)?.seq ?? call.seq,
          ...(payload ? { payload } : {}),
        });
      } else if (message.role === 'assistant') {
        items.push({
          role: 'assistant',
          ...(message.content === undefined ? {} : { content: message.content }),
          toolCalls: pending(message.toolCalls ?? []),
          seq: call.seq,
        });
      } else items.push({ role: message.role, content: message.content, seq: call.seq });
    }
    for (const asked of call.toolCalls) askedIds.add(asked.id);
    if (call.toolCalls.length === 0 && call.content !== undefined) answeredTexts.add(call.content);
    items.push({
      role: 'assistant',
      ...(call.content === undefined ? {} : { content: call.content }),
      toolCalls: pending(call.toolCalls),
      seq: call.seq,
      answer: {
        model: call.model,
        usage: call.usage,
        ...(call.costUsd === undefined ? {} : { costUsd: call.costUsd }),
        finishReason: call.finishReason,
      },
    });
    // A JSON agent's calls have events of their own: their results show as soon as they are recorded.
    for (const asked of call.toolCalls) {
      const outcome = outcomes.get(asked.id);
      if (!outcome || resultIds.has(asked.id)) continue;
      resultIds.add(asked.id);
      items.push({ role: 'tool', callId: asked.id, name: asked.name, ...outcome });
    }
    if (call.error)
      items.push({ role: 'error', code: call.error.code, message: call.error.message, seq: call.seq });
  }
  return items;
}

/** Marks each tool call whose result the chat shows, so the view can link the call to it. */
function linkResults(items: ChatItem[]): ChatItem[] {
  const results = new Set(items.flatMap((item) => (item.role === 'tool' ? [item.callId] : [])));
  return items.map((item) =>
    item.role === 'assistant'
      ? { ...item, toolCalls: item.toolCalls.map((call) => ({ ...call, answered: results.has(call.id) })) }
      : item,
  );
}

/** The newest answer still streaming (not recorded, some text): the one the page shows as "answering". */
export const answeringText = (answers: readonly AnswerText[]): string | undefined =>
  answers.filter((answer) => !answer.recorded && answer.text !== '').at(-1)?.text;
