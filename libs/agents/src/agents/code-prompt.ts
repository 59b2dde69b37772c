import type { ChatMessage, PromptRecord } from '@dura/contracts';
import { canonicalJson, type RunState } from '@dura/core';
import { decodeJournal, type JournalEntry } from '@dura/code-agents/engine';
import { promptHashOf } from './conversation';

/** The prompts a code agent's run recorded before a call: its steps' journals, then the current step's so far. */
export function earlierPrompts(state: RunState, entries: readonly JournalEntry[]): PromptRecord[] {
  const recorded = state.turns.flatMap((turn) => decodeJournal(turn.content));
  return [...recorded, ...entries].flatMap((entry) => (entry.k === 'model' && entry.p ? [entry.p] : []));
}

/**
 * `messages` recorded content-addressed, as a JSON agent's prompt is: chained onto the latest earlier prompt
 * whose messages are the longest start of them (a `ctx.loop` turn continues the previous turn), with only
 * the rest stored. A call that continues none starts a chain of its own: a code agent may hold several
 * conversations with the model.
 */
export function chainedPrompt(
  messages: readonly ChatMessage[],
  earlier: readonly PromptRecord[],
): PromptRecord {
  const wanted = messages.map(canonical);
  const byHash = new Map(earlier.map((record) => [record.hash, record]));
  const expanded = new Map<string, string[] | null>();
  // Each earlier prompt in full (canonical JSON per message), memoized along the chains.
  const full = (record: PromptRecord): string[] | null => {
    const known = expanded.get(record.hash);
    if (known !== undefined) return known;
    expanded.set(record.hash, null); // a cycle or a gap reads as no prompt
    const previous = record.prefix === null ? [] : byHash.get(record.prefix);
    const head = previous === undefined ? null : Array.isArray(previous) ? previous : full(previous);
    const whole = head === null ? null : [...head, ...record.messages.map(canonical)];
    expanded.set(record.hash, whole);
    return whole;
  };
  let best: { hash: string; length: number } | undefined;
  for (const record of earlier) {
    const whole = full(record);
    if (whole === null || whole.length > wanted.length || (best && whole.length < best.length)) continue;
    if (whole.every((message, i) => message === wanted[i]))
      best = { hash: record.hash, length: whole.length };
  }
  const prefix = best?.hash ?? null;
  const rest = messages.slice(best?.length ?? 0);
  return { hash: promptHashOf(prefix, rest), prefix, messages: rest };
}

const canonical = (message: ChatMessage): string => canonicalJson(message);
