import {
  formatTokenCursor,
  TokenMessageSchema,
  type RunEvent,
  type TokenCursor,
  type TokenMessage,
} from '@dura/contracts';
import { createTokenFrames, type TokenFrame, type TokenFrames } from '@dura/core';
import { decodeStored } from './event-store';
import { followRun } from './follow-run';
import { jsonOf } from './live-tokens';
import { pause } from './pause';
import type { RunReader, StoredRunMessage } from './run-reads';
import type { RunWakeups } from './run-wakeups';

/** The two per-run streams a token feed reads: the run log and `DURA_TOKENS`, each by message get. */
export interface TokenFeedSources {
  runs: { reader: RunReader; wakeups: RunWakeups };
  tokens: { reader: RunReader; wakeups: RunWakeups };
}

export interface FollowTokensOptions {
  /** What the reader has taken in (`Last-Event-ID`); from the start by default. */
  from: TokenCursor;
  signal?: AbortSignal;
  /** Re-read interval without a wake-up (default 5 s). */
  pollMs?: number;
  /** Told of a stored message that is not one of the run's (skipped) and of a read that failed (retried). */
  onTrouble?: (what: string, err: unknown) => void;
}

const REREAD_MS = 250;

/**
 * A run's token feed after `from`, as frames to send: the run's live text with `discard`, `gap`, `final`
 * and `end` (see createTokenFrames), read from its log and `DURA_TOKENS` by sequence, so a reader that
 * resumes from the last id it got is sent the rest with nothing skipped or repeated. Creates no consumer.
 * Ends after `end`, or when `signal` aborts.
 */
export async function* followTokenFeed(
  sources: TokenFeedSources,
  runId: string,
  options: FollowTokensOptions,
): AsyncGenerator<TokenFrame> {
  const { from, signal } = options;
  const frames = createTokenFrames(runId, from);
  const take = (source: 'log' | 'tokens', msg: StoredRunMessage): TokenFrame[] => {
    try {
      return source === 'log' ? frames.event(eventOf(msg, runId)) : tokenOf(frames, msg);
    } catch (err) {
      options.onTrouble?.(`seq ${msg.seq} of the run's ${source} skipped`, err);
      return [];
    }
  };
  // What the reader took in is folded in the order that makes the rest independent of how the two
  // interleaved: the log through the cursor, then the text stored so far, then the rest as it comes.
  let logNext = 1;
  for (;;) {
    if (logNext > from.log) break;
    // A replica that lags answers null for what the leader holds: the leader is asked then.
    const msg =
      (await sources.runs.reader.next(runId, logNext)) ??
      (await sources.runs.reader.next(runId, logNext, { leader: true }));
    if (msg === null || msg.seq > from.log) break;
    take('log', msg);
    logNext = msg.seq + 1;
  }
  // A reader resuming after the end is told so at once.
  if (frames.ended !== undefined) {
    yield { id: formatTokenCursor(frames.cursor), event: { event: 'end', data: { status: frames.ended } } };
    return;
  }
  let tokensNext = 1;
  const stored = await sources.tokens.reader.readAll(runId, 1);
  // Text of an attempt the stored text already supersedes is not replayed: a page loaded later never shows it.
  const superseded = supersededAttempts(stored);
  for (const msg of stored) {
    const frames = take('tokens', msg);
    yield* frames.filter((f) => f.event.event !== 'token' || !superseded.has(f.event.data.attempt));
    tokensNext = msg.seq + 1;
  }
  for await (const [source, msg] of followLogAndTokens(sources, runId, {
    fromLog: logNext,
    fromTokens: tokensNext,
    ...(signal ? { signal } : {}),
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    ...(options.onTrouble ? { onTrouble: options.onTrouble } : {}),
  })) {
    for (const frame of take(source, msg)) {
      yield frame;
      if (frame.event.event === 'end') return;
    }
  }
}

export interface FollowBothOptions {
  /** First sequence of the run's log to read. */
  fromLog: number;
  /** First sequence of the run's `DURA_TOKENS` text to read. */
  fromTokens: number;
  signal?: AbortSignal;
  /** Re-read interval without a wake-up (default 5 s). */
  pollMs?: number;
  /** Told of a read that failed (retried). */
  onTrouble?: (what: string, err: unknown) => void;
}

/**
 * A run's log and its `DURA_TOKENS` text from the given sequences on, each in its own order, interleaved as
 * they come (each tagged with its source). A failed read is retried from where it stopped; creates no
 * consumer. Ends only when `signal` aborts (or the caller stops reading).
 */
export async function* followLogAndTokens(
  sources: TokenFeedSources,
  runId: string,
  options: FollowBothOptions,
): AsyncGenerator<['log' | 'tokens', StoredRunMessage]> {
  const { signal } = options;
  const reading = new AbortController();
  const stop = (): void => reading.abort();
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) stop();
  const follow = (source: 'log' | 'tokens', fromSeq: number) =>
    tagged(source, resilient(source === 'log' ? sources.runs : sources.tokens, fromSeq));
  try {
    yield* merge([follow('log', options.fromLog), follow('tokens', options.fromTokens)], reading.signal);
  } finally {
    signal?.removeEventListener('abort', stop);
    stop();
  }

  function resilient(
    deps: { reader: RunReader; wakeups: RunWakeups },
    fromSeq: number,
  ): AsyncGenerator<StoredRunMessage> {
    return (async function* () {
      let next = fromSeq;
      while (!reading.signal.aborted) {
        try {
          const opts = {
            fromSeq: next,
            signal: reading.signal,
            ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
          };
          for await (const msg of followRun(deps, runId, opts)) {
            next = msg.seq + 1;
            yield msg;
          }
        } catch (err) {
          if (reading.signal.aborted) return;
          options.onTrouble?.('a read of the token feed failed; reading again', err);
          await pause(REREAD_MS, reading.signal);
        }
      }
    })();
  }
}

async function* tagged<S, T>(tag: S, source: AsyncGenerator<T>): AsyncGenerator<[S, T]> {
  for await (const item of source) yield [tag, item];
}

/** Items of several async sources as each comes; ends when `signal` aborts or every source ended. */
async function* merge<T>(sources: AsyncGenerator<T>[], signal: AbortSignal): AsyncGenerator<T> {
  const pending = new Map<number, Promise<{ index: number; result: IteratorResult<T> }>>();
  const arm = (index: number): void => {
    pending.set(
      index,
      sources[index]!.next().then((result) => ({ index, result })),
    );
  };
  sources.forEach((_, index) => arm(index));
  const aborted = new Promise<undefined>((resolve) => {
    if (signal.aborted) resolve(undefined);
    signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
  try {
    while (pending.size > 0 && !signal.aborted) {
      const won = await Promise.race([...pending.values(), aborted]);
      if (won === undefined) return;
      if (won.result.done) {
        pending.delete(won.index);
        continue;
      }
      arm(won.index);
      yield won.result.value;
    }
  } finally {
    // Not awaited: a source's pending read ends once the caller aborts `signal`, and its return after it.
    for (const source of sources) void source.return(undefined).catch(() => undefined);
  }
}

/** Attempts of a call that a later attempt of the same call replaced, among `stored`. */
export function supersededAttempts(stored: readonly StoredRunMessage[]): Set<string> {
  const latest = new Map<string, string>();
  const superseded = new Set<string>();
  for (const msg of stored) {
    const parsed = TokenMessageSchema.safeParse(jsonOf(msg.data));
    if (!parsed.success) continue;
    const key = `${parsed.data.decision}.${parsed.data.call}`;
    const before = latest.get(key);
    if (before !== undefined && before !== parsed.data.attempt) superseded.add(before);
    latest.set(key, parsed.data.attempt);
  }
  return superseded;
}

function eventOf(msg: StoredRunMessage, runId: string): RunEvent {
  const event = decodeStored(msg);
  if (event.meta.runId !== runId) throw new Error(`it names run ${event.meta.runId}`);
  return event;
}

function tokenOf(frames: TokenFrames, msg: StoredRunMessage): TokenFrame[] {
  return frames.token(msg.seq, tokenMessageOf(msg));
}

/** The `DURA_TOKENS` message stored at `msg` (throws when it is not one). */
export function tokenMessageOf(msg: StoredRunMessage): TokenMessage {
  const parsed = TokenMessageSchema.safeParse(jsonOf(msg.data));
  if (!parsed.success) throw new Error(`not a token message: ${parsed.error.message}`);
  return parsed.data;
}
