import { createParser, type EventSourceParser } from 'eventsource-parser';
import { MESSAGE_LIMITS } from '@dura/contracts';
import { AttemptFailure } from './errors';

/** One server-sent event: its `event:` name (`message` when absent) and its `data:` lines joined by "\n". */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * The most characters one event may hold before its blank line: a provider's event carries a delta, never a
 * whole answer, and an answer over the message limit cannot be recorded anyway. A larger event is malformed.
 */
export const MAX_SSE_EVENT_CHARS = 4 * MESSAGE_LIMITS.maxBytes;

/**
 * Incremental SSE parser (WHATWG rules, by `eventsource-parser`): feed it text as it arrives, however it is
 * split. Throws `AttemptFailure('malformed')` once an event grows past `MAX_SSE_EVENT_CHARS`.
 */
export class SseParser {
  #events: SseEvent[] = [];
  #overflow = false;
  readonly #parser: EventSourceParser;

  constructor(private readonly maxEventChars: number = MAX_SSE_EVENT_CHARS) {
    this.#parser = createParser({
      maxBufferSize: maxEventChars,
      onEvent: ({ event, data }) => this.#events.push({ event: event ?? 'message', data }),
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.#overflow = true;
      },
    });
  }

  push(text: string): SseEvent[] {
    if (!this.#overflow) this.#parser.feed(text);
    if (this.#overflow)
      throw new AttemptFailure('malformed', `a stream event is longer than ${this.maxEventChars} characters`);
    const events = this.#events;
    this.#events = [];
    return events;
  }
}

/** The events of an SSE body, in order. An event cut off by the end of the stream is dropped, as the spec says. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const events = done
        ? parser.push(decoder.decode())
        : parser.push(decoder.decode(value, { stream: true }));
      yield* events;
      if (done) return;
    }
  } finally {
    // Stopping early (a consumer that found what it needed, or failed) must not leave the connection open.
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Feeds the events of a streamed answer's body to `push` until it says the answer is whole or the body ends.
 * An answer without a body is malformed.
 */
export async function readSseAnswer(response: Response, push: (event: SseEvent) => boolean): Promise<void> {
  if (!response.body) throw new AttemptFailure('malformed', 'the streamed response has no body');
  for await (const event of readSse(response.body)) {
    if (push(event)) break;
  }
}
