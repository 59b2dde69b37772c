import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { DuraApiError, type DuraApi } from './dura-api';
import { readOrThrow } from './run-resources';

const RUN_URI = /^dura:\/\/runs\/([^/?#]+)(\/events)?$/;
/** Pause before following again after the API's stream broke off (an API restart, a dropped connection). */
const REOPEN_MS = 1_000;

/** The run a subscribable uri names, or an invalid-params error naming the uris that can be subscribed to. */
export function runOfUri(uri: string): string {
  const runId = RUN_URI.exec(uri)?.[1];
  if (runId === undefined)
    throw new McpError(
      ErrorCode.InvalidParams,
      `cannot subscribe to ${uri}: only dura://runs/{runId} and dura://runs/{runId}/events can be subscribed to`,
    );
  return decodeURIComponent(runId);
}

/** The `id:` (the event's seq) and `event:` of each Server-Sent Event of `body`, in order. */
export async function* sseFrames(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ id: number | undefined; event: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: number | undefined;
      let event = 'message';
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) id = Number(line.slice(3).trim());
        else if (line.startsWith('event:')) event = line.slice(6).trim();
      }
      // A block of comments only (`: keepalive`) is no event.
      if (block.split('\n').some((line) => line !== '' && !line.startsWith(':'))) yield { id, event };
    }
  }
}

/**
 * `resources/subscribe` for `dura://runs/{runId}` and `dura://runs/{runId}/events`: after the same check as a
 * read (the caller's token must see the run), one follower per uri reads the run's event stream from the API
 * (`GET /runs/{id}/stream`, with the caller's token) and sends `notifications/resources/updated` for each new
 * event, until the run ends, the client unsubscribes or the session closes.
 */
export function serveRunSubscriptions(server: McpServer, api: DuraApi): void {
  const followers = new Map<string, AbortController>();

  async function follow(uri: string, runId: string, first: ReadableStream<Uint8Array>, stop: AbortSignal) {
    let body: ReadableStream<Uint8Array> | undefined = first;
    let next = 0;
    while (!stop.aborted) {
      try {
        body ??= await api.stream(runId, next, stop);
        for await (const frame of sseFrames(body)) {
          if (stop.aborted || frame.event === 'end') return;
          if (frame.id !== undefined) next = frame.id + 1;
          await server.server.sendResourceUpdated({ uri });
        }
      } catch (err) {
        if (stop.aborted) return;
        // The token lost the run (revoked, or a scope removed): nothing more to follow.
        if (err instanceof DuraApiError && err.status >= 400 && err.status < 500) return;
      }
      // The stream broke off before the run ended (an API restart): follow again from the next event.
      body = undefined;
      await new Promise((resolve) => setTimeout(resolve, REOPEN_MS));
    }
  }

  const unsubscribe = (uri: string): void => {
    followers.get(uri)?.abort();
    followers.delete(uri);
  };

  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const uri = request.params.uri;
    const runId = runOfUri(uri);
    if (followers.has(uri)) return {};
    // Refused as resources/read refuses it (a run of another tenant is not found); new events only from here.
    const state = await readOrThrow(() => api.getRun(runId));
    const stop = new AbortController();
    const body = await readOrThrow(() => api.stream(runId, state.lastSeq + 1, stop.signal));
    if (followers.has(uri)) {
      stop.abort();
      return {};
    }
    followers.set(uri, stop);
    void follow(uri, runId, body, stop.signal).finally(() => {
      if (followers.get(uri) === stop) followers.delete(uri);
    });
    return {};
  });

  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    unsubscribe(request.params.uri);
    return {};
  });

  const closed = server.server.onclose;
  server.server.onclose = () => {
    for (const uri of [...followers.keys()]) unsubscribe(uri);
    closed?.();
  };
}
