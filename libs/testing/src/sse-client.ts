/** One Server-Sent Events message, or a comment line (`: …`). */
export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** JSON body when the server refused the stream. */
  error?: unknown;
  messages: AsyncGenerator<SseMessage>;
  /** Drops the connection, as a client whose network failed would. */
  drop(): void;
}

/** Opens `url` as an event stream (a minimal EventSource: no reconnects, so tests drive them). */
export async function openSse(
  url: string,
  lastEventId?: number | string,
  headers: Record<string, string> = {},
): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await fetch(url, {
    signal: abort.signal,
    headers: { ...headers, ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }) },
  });
  if (!response.ok || !response.body)
    return {
      status: response.status,
      headers: response.headers,
      error: await response.json(),
      messages: (async function* () {})(),
      drop: () => abort.abort(),
    };
  // A reader, not `for await` over the stream: the DOM's ReadableStream type has no async iterator.
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  async function* messages(): AsyncGenerator<SseMessage> {
    let buffer = '';
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        buffer += read.value;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          yield parse(block);
        }
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
  }
  return {
    status: response.status,
    headers: response.headers,
    messages: messages(),
    drop: () => abort.abort(),
  };
}

function parse(block: string): SseMessage {
  const message: SseMessage = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) message.comment = line.slice(1).trim();
    const at = line.indexOf(': ');
    const field = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? '' : line.slice(at + 2);
    if (field === 'id' || field === 'event') message[field] = value;
    if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
  }
  return message;
}
