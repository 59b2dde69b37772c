import type { RunEvent, TokenMessage } from '@dura/contracts';
import {
  decodeStored,
  followLogAndTokens,
  supersededAttempts,
  tokenMessageOf,
  type StoredRunMessage,
  type TokenFeedSources,
} from '@dura/event-store';
import type { HttpResponse, Logger } from '@dura/service-kit';
import { drained } from '../run-stream';
import type { UiChunk } from './turn-chunks';
import { createTurnReading } from './turn-reading';

/** The headers of the AI SDK's UI message stream (protocol v1). */
export const UI_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
  'x-vercel-ai-ui-message-stream': 'v1',
};

export interface TurnStreamDeps {
  sources: TokenFeedSources;
  /** Interval of the `: keepalive` comment (default 15 s). */
  keepaliveMs?: number;
  log?: Logger;
}

export interface TurnStreamOptions {
  /**
   * A continuation after the page answered the approval `waitId`: the page has what the log caused up to `seq`
   * (the wait), so that is folded, not sent, and the stream goes on past the wait.
   */
  after?: { seq: number; waitId: string };
}

/**
 * A turn (one run) as the AI SDK's UI message stream: the answer from its first word (text of recorded calls
 * as recorded, of the call in flight from the live tokens, never a mix of two attempts), tool calls and
 * results, an approval request; then `finish`, and the stream closes when the run ended or waits for the
 * page's approval. Read from the run's log and `DURA_TOKENS` by sequence: no consumer, nothing left behind.
 */
export function openTurnStream(
  deps: TurnStreamDeps,
  runId: string,
  options: TurnStreamOptions = {},
): HttpResponse {
  return {
    status: 200,
    headers: UI_STREAM_HEADERS,
    stream: async (res, signal) => {
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), deps.keepaliveMs ?? 15_000);
      try {
        for await (const chunk of turnChunks(deps, runId, options, signal))
          if (!res.write(`data: ${JSON.stringify(chunk)}\n\n`)) await drained(res, signal);
        if (!signal.aborted) res.write('data: [DONE]\n\n');
      } finally {
        clearInterval(keepalive);
      }
    },
  };
}

/** The turn's chunks in order; ends after `finish`. */
export async function* turnChunks(
  deps: TurnStreamDeps,
  runId: string,
  options: TurnStreamOptions,
  signal: AbortSignal,
): AsyncGenerator<UiChunk> {
  const quietThrough = options.after?.seq ?? 0;
  const reading = createTurnReading(runId, quietThrough);
  const turn = reading.turn;
  const trouble = (what: string, err: unknown) => deps.log?.warn(`chat stream: ${what}`, { runId, err });
  const fromLog = (msg: StoredRunMessage): UiChunk[] => {
    let event: RunEvent;
    try {
      event = decodeStored(msg);
      if (event.meta.runId !== runId) throw new Error(`it names run ${event.meta.runId}`);
    } catch (err) {
      trouble(`seq ${msg.seq} of the log skipped`, err);
      return [];
    }
    return reading.event(event);
  };
  const fromTokens = (msg: StoredRunMessage, skip?: ReadonlySet<string>): UiChunk[] => {
    let message: TokenMessage;
    try {
      message = tokenMessageOf(msg);
    } catch (err) {
      trouble(`seq ${msg.seq} of the text skipped`, err);
      return [];
    }
    return reading.token(message, skip);
  };
  /** Whether the stream is done: the run ended, or waits for the page to answer an approval. */
  const done = (): boolean =>
    turn.ended !== undefined ||
    (turn.awaitingApproval !== undefined && turn.awaitingApproval !== options.after?.waitId);

  if (quietThrough > 0) yield { type: 'start', messageId: runId };
  // The log so far, then the text stored so far (an attempt a later one replaced is not shown), then both live.
  let logNext = 1;
  for (;;) {
    const msg = await deps.sources.runs.reader.next(runId, logNext);
    if (msg === null) break;
    yield* fromLog(msg);
    logNext = msg.seq + 1;
  }
  if (done()) {
    yield* finished();
    return;
  }
  const stored = await deps.sources.tokens.reader.readAll(runId, 1);
  const superseded = supersededAttempts(stored);
  let tokensNext = 1;
  for (const msg of stored) {
    yield* fromTokens(msg, superseded);
    tokensNext = msg.seq + 1;
  }
  const following = new AbortController();
  const stop = (): void => following.abort();
  signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const [source, msg] of followLogAndTokens(deps.sources, runId, {
      fromLog: logNext,
      fromTokens: tokensNext,
      signal: following.signal,
      onTrouble: trouble,
    })) {
      yield* source === 'log' ? fromLog(msg) : fromTokens(msg);
      if (done()) {
        yield* finished();
        return;
      }
    }
  } finally {
    signal.removeEventListener('abort', stop);
    stop();
  }

  /** A turn that waits for an approval ends this stream with `finish`; an ended one sent its own. */
  function* finished(): Generator<UiChunk> {
    if (turn.ended === undefined) yield { type: 'finish' };
  }
}
