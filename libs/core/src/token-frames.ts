import {
  formatTokenCursor,
  type RunEvent,
  type TokenCursor,
  type TokenFeedEvent,
  type TokenMessage,
} from '@dura/contracts';
import { createTokenFeed } from './token-feed';

/** One Server-Sent Event of a token feed; the last one of each input carries the cursor after it as its id. */
export interface TokenFrame {
  id?: string;
  event: TokenFeedEvent;
}

/** A run's token feed for a reader resuming after `from`: what it already took in is folded, not sent. */
export interface TokenFrames {
  /** A `DURA_TOKENS` message of the run at stream sequence `seq`. */
  token(seq: number, message: TokenMessage): TokenFrame[];
  /** An event of the run's log. */
  event(event: RunEvent): TokenFrame[];
  readonly cursor: TokenCursor;
  /** The run's final status once its terminal event was taken in. */
  readonly ended: string | undefined;
}

/**
 * Frames the feed of `runId` from `from` on. Give it the log through `from.log` first, then each source in
 * its order (they may interleave). Only the last frame of an input carries an id: a reader cut off inside an
 * input resumes before it, and is sent its `discard`/`gap`/`final` again (harmless to apply twice) but never
 * a `token` twice, as a `token` is always an input's last frame.
 */
export function createTokenFrames(runId: string, from: TokenCursor): TokenFrames {
  const feed = createTokenFeed(runId);
  const cursor: TokenCursor = { ...from };
  const framed = (events: TokenFeedEvent[]): TokenFrame[] =>
    events.map((event, index) =>
      index === events.length - 1 ? { id: formatTokenCursor(cursor), event } : { event },
    );
  return {
    token(seq, message) {
      const events = feed.token(message);
      if (seq <= from.tokens) return [];
      cursor.tokens = Math.max(cursor.tokens, seq);
      return framed(events);
    },
    event(event) {
      const events = feed.event(event);
      if (event.seq <= from.log) return [];
      cursor.log = Math.max(cursor.log, event.seq);
      return framed(events);
    },
    get cursor() {
      return { ...cursor };
    },
    get ended() {
      return feed.ended;
    },
  };
}
