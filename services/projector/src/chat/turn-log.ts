import type { JsonValue, RunEvent } from '@dura/contracts';
import { createTokenFeed } from '@dura/core';
import { decodeStored, type RunReader } from '@dura/event-store';
import { createTurnChunks, type TurnChunks, type UiChunk } from './turn-chunks';

/** One turn of a chat as its log records it so far. */
export interface TurnRecord {
  runId: string;
  /** The user's message that started the turn (the run's input), with the id the page gave it. */
  user: { id: string; text: string } | undefined;
  /** The chunks of the recorded part of the answer (text of recorded model calls, tools, approvals). */
  chunks: UiChunk[];
  /** The run's final status, if it ended; `pending` when the log holds nothing yet. */
  status: string;
  /** The approval the turn waits for, if any, and the log sequence of that wait. */
  awaiting: { waitId: string; seq: number } | undefined;
  /** Whether the log holds any event yet. */
  started: boolean;
}

/** A turn run's input, as the chat route submits it. */
export interface TurnInput {
  chatId: string;
  messageId: string;
  message: string;
  history: { role: 'user' | 'assistant'; content: string }[];
}

/** Folds a turn's log into the chunks and state it records (no live text), reading by message get. */
export async function readTurn(reader: RunReader, runId: string): Promise<TurnRecord> {
  const turn = createTurnChunks(runId);
  const feed = createTokenFeed(runId);
  const chunks: UiChunk[] = [];
  let user: TurnRecord['user'];
  let awaiting: TurnRecord['awaiting'];
  let started = false;
  for (const msg of await reader.readAll(runId, 1)) {
    let event: RunEvent;
    try {
      event = decodeStored(msg);
    } catch {
      continue;
    }
    started = true;
    if (event.type === 'run_requested') user = userOf(event.data.request.input);
    chunks.push(...applyEvent(turn, feed, event));
    if (turn.awaitingApproval !== undefined && awaiting?.waitId !== turn.awaitingApproval)
      awaiting = { waitId: turn.awaitingApproval, seq: event.seq };
    if (turn.awaitingApproval === undefined) awaiting = undefined;
  }
  return { runId, user, chunks, status: turn.ended ?? (started ? 'running' : 'pending'), awaiting, started };
}

/** The chunks a log event causes: its own, then those of the token feed's answer to it (finals, discards). */
export function applyEvent(
  turn: TurnChunks,
  feed: ReturnType<typeof createTokenFeed>,
  event: RunEvent,
): UiChunk[] {
  const own = turn.event(event);
  return [...own, ...feed.event(event).flatMap((e) => turn.feed(e))];
}

function userOf(input: JsonValue | undefined): TurnRecord['user'] {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const { messageId, message } = input;
  return typeof messageId === 'string' && typeof message === 'string'
    ? { id: messageId, text: message }
    : undefined;
}

/** The text the page shows for a turn's answer: its text parts, in order, joined by a blank line. */
export function answerOf(chunks: readonly UiChunk[]): string {
  return textParts(chunks).join('\n\n');
}

/** The text parts chunks leave on a page, in order (after resets). */
export function textParts(chunks: readonly UiChunk[]): string[] {
  return partsOf(chunks).flatMap((p) =>
    p['type'] === 'text' && typeof p['text'] === 'string' ? [p['text']] : [],
  );
}

/** The parts of a UI message the chunks build, as `useChat` builds them (text, step starts, dynamic tools). */
export function partsOf(chunks: readonly UiChunk[]): Record<string, JsonValue>[] {
  const str = (value: JsonValue | undefined): string => (typeof value === 'string' ? value : '');
  const val = (value: JsonValue | undefined): JsonValue => (value === undefined ? null : value);
  const parts: Record<string, JsonValue>[] = [];
  const texts = new Map<string, Record<string, JsonValue>>();
  const tool = (id: JsonValue | undefined) =>
    parts.find((p) => p['type'] === 'dynamic-tool' && p['toolCallId'] === id);
  for (const c of chunks) {
    switch (c.type) {
      case 'start-step':
        parts.push({ type: 'step-start' });
        break;
      case 'reset-step': {
        const at = parts.map((p) => p['type']).lastIndexOf('step-start');
        parts.splice(at + 1);
        break;
      }
      case 'text-start': {
        const part = { type: 'text', text: '', state: 'streaming' };
        texts.set(str(c['id']), part);
        parts.push(part);
        break;
      }
      case 'text-delta': {
        const part = texts.get(str(c['id']));
        if (part) part['text'] = str(part['text']) + str(c['delta']);
        break;
      }
      case 'text-end': {
        const part = texts.get(str(c['id']));
        if (part) part['state'] = 'done';
        break;
      }
      case 'tool-input-available':
        parts.push({
          type: 'dynamic-tool',
          toolName: str(c['toolName']),
          toolCallId: str(c['toolCallId']),
          state: 'input-available',
          input: val(c['input']),
        });
        break;
      case 'tool-output-available': {
        const part = tool(c['toolCallId']);
        if (part) Object.assign(part, { state: 'output-available', output: val(c['output']) });
        break;
      }
      case 'tool-output-error': {
        const part = tool(c['toolCallId']);
        if (part) Object.assign(part, { state: 'output-error', errorText: str(c['errorText']) });
        break;
      }
      case 'tool-approval-request': {
        const part = tool(c['toolCallId']);
        if (part)
          Object.assign(part, { state: 'approval-requested', approval: { id: str(c['approvalId']) } });
        break;
      }
      case 'tool-approval-response': {
        const part = parts.find(
          (p) =>
            p['type'] === 'dynamic-tool' &&
            (p['approval'] as { id?: JsonValue } | undefined)?.id === c['approvalId'],
        );
        if (part)
          Object.assign(part, {
            state: 'approval-responded',
            approval: { id: str(c['approvalId']), approved: c['approved'] === true },
          });
        break;
      }
    }
  }
  return parts;
}
