import type { RunEvent, TokenMessage } from '@dura/contracts';
import { createTokenFeed } from '@dura/core';
import { createTurnChunks, type TurnChunks, type UiChunk } from './turn-chunks';
import { applyEvent } from './turn-log';

/** What a turn stream has read of the run's two sources, as the chunks to send. */
export interface TurnReading {
  /** The run's next log event, in log order. */
  event(event: RunEvent): UiChunk[];
  /** The run's next `DURA_TOKENS` message, in stream order; text of an attempt in `skip` is not shown. */
  token(message: TokenMessage, skip?: ReadonlySet<string>): UiChunk[];
  readonly turn: TurnChunks;
}

/**
 * A turn's chunks from its log and its live text, each read in its own order (no I/O: the caller reads).
 * Log events up to `quietThrough` are folded, not sent (the page has what they caused).
 */
export function createTurnReading(runId: string, quietThrough = 0): TurnReading {
  const turn = createTurnChunks(runId);
  const feed = createTokenFeed(runId);
  return {
    turn,
    event(event) {
      const chunks = applyEvent(turn, feed, event);
      return event.seq <= quietThrough ? [] : chunks;
    },
    token(message, skip) {
      return feed
        .token(message)
        .filter((e) => e.event !== 'token' || !skip?.has(e.data.attempt))
        .flatMap((e) => turn.feed(e));
    },
  };
}
