import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CODE_JOURNAL_TAG,
  parseTokenCursor,
  TOKEN_CURSOR_START,
  type RunEvent,
  type TokenCursor,
  type TokenMessage,
} from '@dura/contracts';
import { createTokenFrames, createTokenText, type TokenFrame } from '../src/index';
import { runEvent, thoughtData } from '../src/testing';

const RUN = 'tok-1';

/** One input of the feed as it arrives: a token message at its stream sequence, or a log event. */
type Arrival = { token: TokenMessage; seq: number } | { log: RunEvent };

interface World {
  arrivals: Arrival[];
  /** The recorded text of each call, by `decision.call`. */
  recorded: Map<string, string>;
  /** Every attempt's whole text, by attempt id: what shown text may be a prefix of. */
  attempts: Map<string, string>;
}

interface CallPlan {
  /** Attempts before the recorded one, each cut after some pieces (a crash, a lost race). */
  lost: { pieces: string[]; cut: number }[];
  pieces: string[];
  /** Messages of the recorded attempt whose publish failed. */
  dropped: number[];
}

/** A run's arrivals: per decision its calls' attempts streamed, then the thought (tokens may land after it). */
function worldOf(plan: { decisions: CallPlan[][]; late: number[]; code: boolean; order: number[] }): World {
  const recorded = new Map<string, string>();
  const attempts = new Map<string, string>();
  const tokens: { msg: TokenMessage; at: number }[] = [];
  const log: RunEvent[] = [];
  const started = plan.code
    ? { pinned: { agent: 'a', version: '1', promptVersion: '1', provider: 'code', model: 'm' } }
    : {};
  log.push(
    runEvent(
      'run_requested',
      { request: { v: 1, runId: RUN, agent: { kind: 'scripted', steps: [] } } },
      { seq: 1, runId: RUN },
    ),
  );
  log.push(runEvent('run_started', started, { seq: 2, runId: RUN }));
  let clock = 0;
  plan.decisions.forEach((calls, decision) => {
    calls.forEach((c, call) => {
      const stream = (attempt: string, pieces: string[], drop: number[]) => {
        attempts.set(attempt, pieces.join(''));
        pieces.forEach((delta, n) => {
          clock += 1;
          if (!drop.includes(n))
            tokens.push({ msg: { runId: RUN, decision, call, attempt, n, delta }, at: clock });
        });
      };
      c.lost.forEach((lost, i) => stream(`d${decision}c${call}a${i}`, lost.pieces.slice(0, lost.cut), []));
      stream(`d${decision}c${call}ok`, c.pieces, c.dropped);
      recorded.set(`${decision}.${call}`, c.pieces.join(''));
    });
    const texts = calls.map((c) => c.pieces.join(''));
    const content = plan.code
      ? JSON.stringify({
          journal: CODE_JOURNAL_TAG,
          entries: texts.map((t) => ({ k: 'model', h: 'h', a: { content: t } })),
        })
      : texts[0];
    clock += plan.late[decision % plan.late.length] ?? 0; // a publish still in flight when the thought lands
    log.push({
      ...runEvent(
        'thought',
        { ...thoughtData({ kind: 'complete' }), content },
        { seq: log.length + 1, runId: RUN },
      ),
      at: clock,
    } as never);
  });
  log.push(runEvent('run_completed', { output: 'done' }, { seq: log.length + 1, runId: RUN }));
  // Stream sequences are shared with other runs: gaps between this run's messages.
  const arrivals: Arrival[] = tokens
    .sort((a, b) => a.at - b.at)
    .map((t, i) => ({ token: t.msg, seq: 10 + i * 3 }));
  // The log's place among the tokens: each event arrives after the tokens stamped before it.
  const merged: Arrival[] = [];
  let ti = 0;
  for (const event of log) {
    const at = (event as { at?: number }).at ?? (event.type === 'run_completed' ? Infinity : 0);
    while (ti < arrivals.length && (tokens[ti]?.at ?? 0) <= at) merged.push(arrivals[ti++]!);
    const { at: _at, ...clean } = event as RunEvent & { at?: number };
    merged.push({ log: clean });
  }
  merged.push(...arrivals.slice(ti));
  // Shuffle neighbours a little: the two sources reach a reader in any interleaving.
  for (const i of plan.order) {
    const a = merged[i % merged.length];
    const b = merged[(i % merged.length) + 1];
    if (a && b && 'token' in a !== 'token' in b)
      [merged[i % merged.length], merged[(i % merged.length) + 1]] = [b, a];
  }
  return { arrivals: merged, recorded, attempts };
}

/**
 * A connection opened at `now` after `from`: the log through the cursor, then the token history, then the
 * log after the cursor that has arrived, then whatever arrives later, as the projector reads them.
 */
function* connection(world: World, from: TokenCursor, now: number): Generator<TokenFrame> {
  const frames = createTokenFrames(RUN, from);
  const past = world.arrivals.slice(0, now);
  const logs = past.flatMap((a) => ('log' in a ? [a.log] : []));
  for (const e of logs.filter((e) => e.seq <= from.log)) yield* frames.event(e);
  for (const a of past) if ('token' in a) yield* frames.token(a.seq, a.token);
  for (const e of logs.filter((e) => e.seq > from.log)) yield* frames.event(e);
  for (const a of world.arrivals.slice(now))
    yield* 'token' in a ? frames.token(a.seq, a.token) : frames.event(a.log);
}

const piece = fc.string({ minLength: 1, maxLength: 3 });
const callPlan = fc.record({
  lost: fc.array(fc.record({ pieces: fc.array(piece, { minLength: 1, maxLength: 4 }), cut: fc.nat(4) }), {
    maxLength: 2,
  }),
  pieces: fc.array(piece, { minLength: 1, maxLength: 6 }),
  dropped: fc.array(fc.nat(5), { maxLength: 2 }),
});
const planOf = (calls: number) =>
  fc.record({
    decisions: fc.array(fc.array(callPlan, { minLength: calls, maxLength: calls }), {
      minLength: 1,
      maxLength: 3,
    }),
    late: fc.array(fc.nat(3), { minLength: 1, maxLength: 3 }),
    code: fc.constant(calls > 1),
    order: fc.array(fc.nat(60), { maxLength: 8 }),
  });

describe('a token feed read through any pattern of reconnects', () => {
  it('shows each call as one attempt at a time, and ends with exactly the recorded answers, no token twice', () => {
    fc.assert(
      fc.property(
        fc.oneof(planOf(1), planOf(2)),
        fc.array(fc.record({ after: fc.nat(12), wait: fc.nat(6) }), { maxLength: 8 }),
        (plan, cuts) => {
          const world = worldOf(plan);
          const text = createTokenText();
          const seen = new Set<string>();
          let cursor = TOKEN_CURSOR_START;
          let now = 1;
          for (let i = 0; ; i += 1) {
            const cut = cuts[i];
            let taken = 0;
            let done = true;
            for (const frame of connection(world, cursor, now)) {
              if (cut && taken === cut.after) {
                done = false;
                break;
              }
              taken += 1;
              now += 1;
              if (frame.id !== undefined) cursor = parseTokenCursor(frame.id)!;
              text.apply(frame.event);
              if (frame.event.event === 'token') {
                const { attempt, n } = frame.event.data;
                expect(seen.has(`${attempt}#${n}`), `token ${attempt}#${n} sent twice`).toBe(false);
                seen.add(`${attempt}#${n}`);
              }
              // Never a mix of two attempts: unrecorded text is a prefix of one attempt's text.
              for (const answer of text.answers())
                if (!answer.recorded && !answer.missing)
                  expect([...world.attempts.values()].some((whole) => whole.startsWith(answer.text))).toBe(
                    true,
                  );
            }
            if (done) break;
            now = Math.min(world.arrivals.length, now + (cut?.wait ?? 0));
          }
          expect(text.ended).toBe('completed');
          expect(new Map(text.answers().map((a) => [`${a.decision}.${a.call}`, a.text]))).toEqual(
            world.recorded,
          );
          expect(text.answers().every((a) => a.recorded)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('what the feed tells a reader', () => {
  const msg = (n: number, delta: string, attempt = 'a1', decision = 0): TokenMessage => ({
    runId: RUN,
    decision,
    call: 0,
    attempt,
    n,
    delta,
  });

  it('given a second attempt of a call, when its first token comes, then the first attempt is discarded', () => {
    const frames = createTokenFrames(RUN, TOKEN_CURSOR_START);
    frames.token(1, msg(0, 'Hel'));
    const out = frames.token(2, msg(0, 'Bon', 'a2'));
    expect(out.map((f) => f.event.event)).toEqual(['discard', 'token']);
    expect(out[0]).toEqual({
      event: {
        event: 'discard',
        data: { runId: RUN, decision: 0, call: 0, attempt: 'a1', reason: 'asked_again' },
      },
    });
    expect(out[1]?.id).toBe('2-0');
    // The dropped attempt's late text is not relayed.
    expect(frames.token(3, msg(1, 'lo'))).toEqual([]);
  });

  it('given a lost message, when the next one comes, then a gap names what is missing', () => {
    const frames = createTokenFrames(RUN, TOKEN_CURSOR_START);
    frames.token(1, msg(0, 'a'));
    const out = frames.token(5, msg(3, 'd'));
    expect(out.map((f) => f.event)).toEqual([
      { event: 'gap', data: { runId: RUN, decision: 0, call: 0, attempt: 'a1', from: 1, to: 3 } },
      { event: 'token', data: msg(3, 'd') },
    ]);
    const text = createTokenText();
    text.apply({ event: 'token', data: msg(0, 'a') });
    for (const f of out) text.apply(f.event);
    expect(text.answers()).toEqual([{ decision: 0, call: 0, text: 'ad', recorded: false, missing: true }]);
  });

  it('given the recorded thought, then the call gets its recorded text and later tokens of it are ignored', () => {
    const frames = createTokenFrames(RUN, TOKEN_CURSOR_START);
    frames.token(1, msg(0, 'Hi'));
    const thought = runEvent(
      'thought',
      { ...thoughtData({ kind: 'complete' }), content: 'Hi there' },
      { seq: 3, runId: RUN },
    );
    expect(frames.event(thought)).toEqual([
      { id: '1-3', event: { event: 'final', data: { runId: RUN, decision: 0, call: 0, text: 'Hi there' } } },
    ]);
    expect(frames.token(4, msg(1, ' there'))).toEqual([]);
  });

  it('given a cursor, then what the reader took in is folded but not sent again', () => {
    const frames = createTokenFrames(RUN, { tokens: 2, log: 0 });
    expect(frames.token(1, msg(0, 'a'))).toEqual([]);
    expect(frames.token(2, msg(1, 'b'))).toEqual([]);
    expect(frames.token(3, msg(2, 'c'))).toEqual([
      { id: '3-0', event: { event: 'token', data: msg(2, 'c') } },
    ]);
  });

  it('rejects a Last-Event-ID that is not a cursor', () => {
    expect(parseTokenCursor('12-7')).toEqual({ tokens: 12, log: 7 });
    expect(parseTokenCursor('12')).toBeUndefined();
    expect(parseTokenCursor('x-1')).toBeUndefined();
  });
});
