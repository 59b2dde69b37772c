import { TOKEN_CURSOR_START, type TokenCursor } from '@dura/contracts';
import type { TokenFrame } from '@dura/core';
import { followTokenFeed, type TokenFeedSources } from '@dura/event-store';

/** A piece of a model's answer while it streams (a `token` of the run's token feed). */
export interface LiveDelta {
  /** The thought the answer will be recorded in (counts from 0). */
  decision: number;
  /** Which model call of that decision (0 for an agent's one call). */
  call: number;
  /** The asking of the model it belongs to: text of an attempt dropped later is discarded by a `discard`. */
  attempt: string;
  delta: string;
}

export interface FollowTokensOptions {
  signal: AbortSignal;
  /** The id of the last frame taken in (`frame.id`); from the start of the retained text by default. */
  from?: TokenCursor;
}

/**
 * Calls `onFrame` with each frame of the run's token feed (`token`, `discard`, `gap`, `final`, `end`) read from
 * `DURA_TOKENS` and the run's log by message get (no consumer), until `end` or `signal` aborts. Resuming with
 * `from` set to the last frame's id sends the rest with no gap and no repeat; `createTokenText` from
 * `@dura/core` turns the frames into each call's text.
 */
export async function followTokens(
  sources: TokenFeedSources,
  runId: string,
  onFrame: (frame: TokenFrame) => void,
  options: FollowTokensOptions,
): Promise<void> {
  const from = options.from ?? TOKEN_CURSOR_START;
  for await (const frame of followTokenFeed(sources, runId, { from, signal: options.signal })) onFrame(frame);
}
