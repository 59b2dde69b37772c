import type { TokenFeedEvent } from '@dura/contracts';

/** A model call's text as a reader of the token feed shows it. */
export interface AnswerText {
  decision: number;
  call: number;
  text: string;
  /** The text is the recorded answer (a `final` came): it will not change again. */
  recorded: boolean;
  /** Some of the streamed text is missing (lost or expired) until the recorded answer replaces it. */
  missing: boolean;
}

interface CallText extends AnswerText {
  attempt: string | undefined;
  next: number;
  dropped: Set<string>;
}

/** A reader's side of the token feed: the text of each model call, whatever the reconnects. */
export interface TokenText {
  apply(event: TokenFeedEvent): void;
  /** Every call seen, in order of decision and call. */
  answers(): AnswerText[];
  /** The text of one call ('' before any). */
  text(decision: number, call: number): string;
  /** The run's final status once `end` came. */
  readonly ended: string | undefined;
}

/**
 * Assembles the token feed into text per model call: an attempt's tokens in order, dropped on `discard` (or
 * when another attempt's tokens come, should the `discard` not have), replaced by the recorded answer on
 * `final`. A repeated event changes nothing, so a reader that resumes after a cut shows no text twice.
 */
export function createTokenText(): TokenText {
  const calls = new Map<string, CallText>();
  let ended: string | undefined;

  function callOf(decision: number, call: number): CallText {
    const key = `${decision}.${call}`;
    let found = calls.get(key);
    if (!found) {
      found = {
        decision,
        call,
        text: '',
        recorded: false,
        missing: false,
        attempt: undefined,
        next: 0,
        dropped: new Set(),
      };
      calls.set(key, found);
    }
    return found;
  }

  function apply(event: TokenFeedEvent): void {
    if (event.event === 'end') {
      ended = event.data.status;
      return;
    }
    const c = callOf(event.data.decision, event.data.call);
    switch (event.event) {
      case 'final':
        Object.assign(c, { text: event.data.text, recorded: true, missing: false, attempt: undefined });
        return;
      case 'discard':
        c.dropped.add(event.data.attempt);
        if (!c.recorded && c.attempt === event.data.attempt)
          Object.assign(c, { text: '', missing: false, attempt: undefined, next: 0 });
        return;
      case 'gap':
        if (c.recorded || c.attempt !== event.data.attempt || c.next >= event.data.to) return;
        c.missing = true;
        c.next = event.data.to;
        return;
      case 'token': {
        const { attempt, n, delta } = event.data;
        if (c.recorded || c.dropped.has(attempt)) return;
        if (c.attempt !== attempt) {
          if (c.attempt !== undefined) c.dropped.add(c.attempt);
          Object.assign(c, { text: '', missing: n > 0, attempt, next: 0 });
        }
        if (n < c.next) return;
        if (n > c.next) c.missing = true;
        c.text += delta;
        c.next = n + 1;
        return;
      }
    }
  }

  return {
    apply,
    answers: () =>
      [...calls.values()]
        .sort((a, b) => a.decision - b.decision || a.call - b.call)
        .map(({ decision, call, text, recorded, missing }) => ({ decision, call, text, recorded, missing })),
    text: (decision, call) => calls.get(`${decision}.${call}`)?.text ?? '',
    get ended() {
      return ended;
    },
  };
}
