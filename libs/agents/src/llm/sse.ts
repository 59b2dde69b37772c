/** One server-sent event: its `event:` name (`message` when absent) and its `data:` lines joined by "\n". */
export interface SseEvent {
  event: string;
  data: string;
}

/** Incremental SSE parser (WHATWG rules): feed it text as it arrives, however it is split. */
export class SseParser {
  #buffer = '';
  #event = '';
  #data: string[] = [];

  push(text: string): SseEvent[] {
    this.#buffer += text;
    const events: SseEvent[] = [];
    for (;;) {
      const end = /\r\n|\r|\n/.exec(this.#buffer);
      // A trailing "\r" may be the first half of "\r\n": wait for the next chunk to tell.
      if (!end || (end[0] === '\r' && end.index === this.#buffer.length - 1)) break;
      const line = this.#buffer.slice(0, end.index);
      this.#buffer = this.#buffer.slice(end.index + end[0].length);
      const event = this.#line(line);
      if (event) events.push(event);
    }
    return events;
  }

  #line(line: string): SseEvent | undefined {
    if (line === '') {
      const event =
        this.#data.length > 0 ? { event: this.#event || 'message', data: this.#data.join('\n') } : undefined;
      this.#event = '';
      this.#data = [];
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#event = value;
    if (field === 'data') this.#data.push(value);
    return undefined;
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
