import { authHeaders } from './token';

/** One Server-Sent Event as the stream sent it. */
export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/** Splits SSE text into messages; returns the messages and the unfinished rest (to prepend to the next chunk). */
export function parseSse(buffer: string): { messages: SseMessage[]; rest: string } {
  const messages: SseMessage[] = [];
  const blocks = buffer.replace(/\r\n/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const message: SseMessage = { event: 'message', data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') message.event = value;
      else if (field === 'id') message.id = value;
    }
    if (data.length > 0 || message.id !== undefined) messages.push({ ...message, data: data.join('\n') });
  }
  return { messages, rest };
}

/**
 * Follows an SSE route with the console's token (EventSource cannot send one), reconnecting after a drop
 * with `Last-Event-ID` set to the last id received, so nothing is missed or repeated. Ends on `end` events
 * or when `signal` aborts.
 */
export async function followSse(
  path: string,
  onMessage: (message: SseMessage) => void,
  signal: AbortSignal,
  lastEventId?: string,
): Promise<void> {
  let last = lastEventId;
  while (!signal.aborted) {
    let ended = false;
    try {
      const response = await fetch(path, {
        headers: {
          ...authHeaders(),
          accept: 'text/event-stream',
          ...(last ? { 'last-event-id': last } : {}),
        },
        signal,
      });
      if (!response.ok || !response.body) throw new Error(`${path} answered ${response.status}`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const { messages, rest } = parseSse(buffer + value);
        buffer = rest;
        for (const message of messages) {
          if (message.id !== undefined) last = message.id;
          if (message.event === 'end') ended = true;
          onMessage(message);
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    if (ended) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
