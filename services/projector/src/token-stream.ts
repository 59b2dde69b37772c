import type { IncomingMessage } from 'node:http';
import { parseTokenCursor, TOKEN_CURSOR_START, type TokenCursor } from '@dura/contracts';
import type { TokenFrame } from '@dura/core';
import { followTokenFeed, type TokenFeedSources } from '@dura/event-store';
import type { HttpResponse, Logger } from '@dura/service-kit';
import { BadQuery } from './query-params';
import { drained, SSE_HEADERS } from './run-stream';

export interface TokenStreamDeps {
  sources: TokenFeedSources;
  /** Interval of the `: keepalive` comment (default 15 s). */
  keepaliveMs?: number;
  log?: Logger;
}

/** Where the client is: its `Last-Event-ID` (an id this route sent), else the start of the retained text. */
function cursorOf(req: IncomingMessage): TokenCursor {
  const header = req.headers['last-event-id'];
  if (typeof header !== 'string' || header.trim() === '') return TOKEN_CURSOR_START;
  const cursor = parseTokenCursor(header);
  if (!cursor)
    throw new BadQuery(
      `header Last-Event-ID "${header.slice(0, 40)}" is not an id of this stream (<tokens seq>-<log seq>); send the last id it sent you, or none to start over`,
      'bad_last_event_id',
    );
  return cursor;
}

function frameText({ id, event }: TokenFrame): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/**
 * `GET /runs/:id/tokens`: the run's live model text as Server-Sent Events (`token`, `discard`, `gap`, `final`,
 * `end`; see docs/streaming.md), read from `DURA_TOKENS` and the run's log by sequence. A client that
 * reconnects with `Last-Event-ID` gets the rest with no gap and no repeat; one without it gets the text of
 * the calls not yet recorded from their start and each recorded call's answer as a `final`. Ends after `end`.
 */
export function openTokenStream(deps: TokenStreamDeps, runId: string, req: IncomingMessage): HttpResponse {
  const from = cursorOf(req);
  return {
    status: 200,
    headers: SSE_HEADERS,
    stream: async (res, signal) => {
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), deps.keepaliveMs ?? 15_000);
      res.write(': live tokens\n\n');
      try {
        const frames = followTokenFeed(deps.sources, runId, {
          from,
          signal,
          onTrouble: (what, err) => deps.log?.warn(`token stream: ${what}`, { runId, err }),
        });
        for await (const frame of frames) if (!res.write(frameText(frame))) await drained(res, signal);
      } finally {
        clearInterval(keepalive);
      }
    },
  };
}
