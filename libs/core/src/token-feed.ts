import {
  CODE_JOURNAL_TAG,
  type EventData,
  type RunEvent,
  type TokenFeedEvent,
  type TokenMessage,
} from '@dura/contracts';
import { STATUS_AFTER } from './lifecycle';
import { isTerminal } from './run-state';

/** Where one model call of a decision not yet recorded stands: the attempt shown, and those dropped. */
interface CallFeed {
  attempt: string | undefined;
  /** The next message number expected of `attempt`. */
  next: number;
  dropped: Set<string>;
}

/**
 * A run's token feed: what a reader is sent, given the run's `DURA_TOKENS` messages and its log, each in its
 * own order. Per model call, the first attempt seen is shown; a later one drops it for good (`discard`), so
 * a reader never shows a mix of two attempts, even when a losing replica's text keeps coming. A number jump
 * in an attempt is a `gap`. When a thought records a decision, each of its calls gets a `final` with the
 * recorded text and later messages of those calls are ignored; the terminal event drops what was never
 * recorded and ends the feed.
 *
 * Once it has taken in each source up to a cursor, what it sends next does not depend on how the two sources
 * interleaved before: rebuilt from the cursor's prefixes, it sends a resuming reader exactly what the first
 * connection would have sent.
 */
export interface TokenFeed {
  token(message: TokenMessage): TokenFeedEvent[];
  event(event: RunEvent): TokenFeedEvent[];
  /** The run's final status once its terminal event was taken in. */
  readonly ended: string | undefined;
}

export function createTokenFeed(runId: string): TokenFeed {
  /** Thoughts recorded so far: decisions below it are final. */
  let recorded = 0;
  let code = false;
  let ended: string | undefined;
  const open = new Map<string, CallFeed>();
  const keyOf = (decision: number, call: number): string => `${decision}.${call}`;

  function token(message: TokenMessage): TokenFeedEvent[] {
    if (ended !== undefined || message.runId !== runId || message.decision < recorded) return [];
    const key = keyOf(message.decision, message.call);
    const feed = open.get(key) ?? { attempt: undefined, next: 0, dropped: new Set<string>() };
    open.set(key, feed);
    const { decision, call, attempt, n } = message;
    if (feed.dropped.has(attempt)) return [];
    const out: TokenFeedEvent[] = [];
    if (feed.attempt !== attempt) {
      if (feed.attempt !== undefined) {
        feed.dropped.add(feed.attempt);
        out.push({
          event: 'discard',
          data: { runId, decision, call, attempt: feed.attempt, reason: 'asked_again' },
        });
      }
      feed.attempt = attempt;
      feed.next = 0;
    }
    // A repeat of a message already sent (a retried publish) is not text to show twice.
    if (n < feed.next) return out;
    if (n > feed.next)
      out.push({ event: 'gap', data: { runId, decision, call, attempt, from: feed.next, to: n } });
    feed.next = n + 1;
    out.push({ event: 'token', data: message });
    return out;
  }

  function event(e: RunEvent): TokenFeedEvent[] {
    if (ended !== undefined) return [];
    if (e.type === 'run_started') code = e.data.pinned?.provider === 'code';
    if (e.type === 'thought') return recordThought(e.data);
    const status = STATUS_AFTER[e.type];
    if (status === undefined || !isTerminal(status)) return [];
    ended = status;
    const out = dropOpen(() => true);
    out.push({ event: 'end', data: { status } });
    return out;
  }

  function recordThought(data: EventData<'thought'>): TokenFeedEvent[] {
    const decision = recorded;
    recorded += 1;
    const texts = answerTexts(data, code);
    const out: TokenFeedEvent[] = texts.map((text, call) => ({
      event: 'final',
      data: { runId, decision, call, text },
    }));
    // Calls streamed for this decision that it does not record (a lost race asked more) are dropped.
    out.push(...dropOpen((d, call) => d === decision && call >= texts.length));
    for (const key of [...open.keys()]) if (Number(key.split('.')[0]) <= decision) open.delete(key);
    return out;
  }

  function dropOpen(which: (decision: number, call: number) => boolean): TokenFeedEvent[] {
    const out: TokenFeedEvent[] = [];
    for (const [key, feed] of open) {
      const [decision, call] = key.split('.').map(Number) as [number, number];
      if (feed.attempt === undefined || !which(decision, call)) continue;
      out.push({
        event: 'discard',
        data: { runId, decision, call, attempt: feed.attempt, reason: 'not_recorded' },
      });
      feed.dropped.add(feed.attempt);
      feed.attempt = undefined;
    }
    return out;
  }

  return {
    token,
    event,
    get ended() {
      return ended;
    },
  };
}

/**
 * The text of each model call a thought records, in call order: a code agent's `ctx.model` answers from its
 * journal, an agent's one answer from the thought's content ('' when it answered with tool calls only).
 */
export function answerTexts(thought: EventData<'thought'>, codeAgent: boolean): string[] {
  if (!codeAgent) return [thought.content ?? ''];
  let journal: unknown;
  try {
    journal = JSON.parse(thought.content ?? '');
  } catch {
    return [];
  }
  if (!isRecord(journal) || journal['journal'] !== CODE_JOURNAL_TAG || !Array.isArray(journal['entries']))
    return [];
  return journal['entries'].flatMap((entry: unknown) => {
    if (!isRecord(entry) || entry['k'] !== 'model' || !isRecord(entry['a'])) return [];
    const content = entry['a']['content'];
    return [typeof content === 'string' ? content : ''];
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
