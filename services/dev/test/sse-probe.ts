/** One live run stream (`GET /runs/:id/stream`) opened by a test, as a browser's EventSource would. */
export interface StreamProbe {
  status: number;
  /** `Retry-After` of a refused stream. */
  retryAfter: string | null;
  /** JSON body of a refused stream. */
  error?: unknown;
  /** The `id:` of the first event frame (its seq). */
  firstEventId(): Promise<string | undefined>;
  /** The event names of every frame (`end` included) until the server ends the stream. */
  eventsUntilEnd(): Promise<string[]>;
  /** Drops the connection. */
  close(): void;
}

export async function openStream(apiUrl: string, runId: string, token: string): Promise<StreamProbe> {
  const abort = new AbortController();
  const response = await fetch(`${apiUrl}/runs/${encodeURIComponent(runId)}/stream`, {
    signal: abort.signal,
    headers: { authorization: `Bearer ${token}` },
  });
  const close = (): void => abort.abort();
  if (!response.ok || !response.body)
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      error: await response.json().catch(() => undefined),
      firstEventId: () => Promise.resolve(undefined),
      eventsUntilEnd: () => Promise.resolve([]),
      close,
    };
  const body = response.body.pipeThrough(new TextDecoderStream());
  async function* frames(): AsyncGenerator<{ id?: string; event?: string }> {
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const event = /^event: (.*)$/m.exec(block)?.[1];
          yield { ...(id === undefined ? {} : { id }), ...(event === undefined ? {} : { event }) };
        }
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
  }
  return {
    status: response.status,
    retryAfter: null,
    async firstEventId() {
      for await (const frame of frames()) if (frame.id !== undefined) return frame.id;
      return undefined;
    },
    async eventsUntilEnd() {
      const events: string[] = [];
      for await (const frame of frames()) if (frame.event !== undefined) events.push(frame.event);
      return events;
    },
    close,
  };
}
