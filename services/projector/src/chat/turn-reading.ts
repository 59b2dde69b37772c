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
 * A turn's chunks from its log and its live text, each read in its own order (no I/O: the caller reads), the
 * same whatever the interleaving of the two: the two followers lag each on its own, so text of decision `d`
 * can be read before the log's thought `d - 1` (the step it follows). Such text waits, in order, until the log
 * reached its decision; shown at once, it would open its step before the one it follows and be shown again
 * by its own step. Log events up to `quietThrough` are folded, not sent (the page has what they caused).
 */
export function createTurnReading(runId: string, quietThrough = 0): TurnReading {
  const turn = createTurnChunks(runId);
  const feed = createTokenFeed(runId);
  /** Thoughts read from the log: the decision whose text may be shown now. */
  let decisions = 0;
  const ahead: { message: TokenMessage; skip: ReadonlySet<string> | undefined }[] = [];
  const shown = (message: TokenMessage, skip: ReadonlySet<string> | undefined): UiChunk[] =>
    feed
      .token(message)
      .filter((e) => e.event !== 'token' || !skip?.has(e.data.attempt))
      .flatMap((e) => turn.feed(e));
  return {
    turn,
    event(event) {
      const applied = applyEvent(turn, feed, event);
      const chunks = event.seq <= quietThrough ? [] : applied;
      if (event.type === 'thought') decisions += 1;
      while (ahead[0] !== undefined && ahead[0].message.decision <= decisions) {
        const { message, skip } = ahead.shift()!;
        chunks.push(...shown(message, skip));
      }
      return chunks;
    },
    token(message, skip) {
      if (ahead.length > 0 || message.decision > decisions) {
        ahead.push({ message, skip });
        return [];
      }
      return shown(message, skip);
    },
  };
}
