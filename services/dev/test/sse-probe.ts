/** One live run stream (`GET /runs/:id/stream`) opened by a test, as a browser's EventSource would. */
export interface StreamProbe {
  status: number;
  /** `Retry-After` of a refused stream. */
  retryAfter: string | null;
  /** JSON body of a refused stream. */
  error?: unknown;
  /** The `id:` of the first event frame (its seq). */
  firstEventId(): Promise<string | undefined>;
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
      close,
    };
  const body = response.body.pipeThrough(new TextDecoderStream());
  return {
    status: response.status,
    retryAfter: null,
    async firstEventId() {
      let buffer = '';
      try {
        for await (const chunk of body) {
          buffer += chunk;
          const id = /^id: (\d+)$/m.exec(buffer);
          if (id) return id[1];
        }
      } catch (err) {
        if (!abort.signal.aborted) throw err;
      }
      return undefined;
    },
    close,
  };
}
