import { beforeAll, describe, expect, it, vi } from 'vitest';
import { parseTokenCursor, STREAMS, TOKEN_CURSOR_START, type TokenCursor } from '@dura/contracts';
import { createTokenText, type TokenFrame } from '@dura/core';
import {
  createLiveTokens,
  createRunReader,
  createRunWakeups,
  followTokenFeed,
  RUN_TOKENS,
  type TokenFeedSources,
} from '../src/index';
import { retryUntil, useNatsConnections, useTestInfra, useEventStore } from './infra';
import { runEvents } from './run-events';

vi.setConfig({ testTimeout: 60_000 });
const infra = useTestInfra({ database: false });
const open = useNatsConnections(infra);
const env = useEventStore(open);
let sources: TokenFeedSources;

beforeAll(async () => {
  const reader = await open();
  sources = {
    runs: { reader: createRunReader(reader.jsm), wakeups: createRunWakeups(reader.nc) },
    tokens: {
      reader: createRunReader(reader.jsm, RUN_TOKENS),
      wakeups: createRunWakeups(reader.nc, RUN_TOKENS.subject),
    },
  };
});

/** Reads the feed from `from` until `end`, or until `stopAfter` frames. */
async function read(runId: string, from: TokenCursor, stopAfter = Infinity): Promise<TokenFrame[]> {
  const frames: TokenFrame[] = [];
  const abort = new AbortController();
  for await (const frame of followTokenFeed(sources, runId, { from, signal: abort.signal })) {
    frames.push(frame);
    if (frames.length >= stopAfter) break;
  }
  abort.abort();
  return frames;
}

describe('live text through DURA_TOKENS', () => {
  it('publishes in order without waiting, and a reader resuming from any id ends with the recorded answer', async () => {
    const runId = 'tok-resume';
    const { js } = await open();
    const live = createLiveTokens(js, runId, 0);
    const words = Array.from({ length: 40 }, (_, i) => `w${i} `);
    for (const word of words) live.delta(0, word); // returns at once: nothing awaited per delta
    await live.flush();
    const answer = words.join('');
    const events = runEvents(runId);
    const thought = events.make('thought', {
      step: 0,
      model: { id: 'm', promptVersion: '1' },
      content: answer,
      decision: { kind: 'complete', output: answer },
      usage: { inputTokens: 1, outputTokens: 1 },
      finishReason: 'stop',
    });
    await env.store.append(runId, [events.requested(), events.started(), thought, events.completed()], {
      expectedSeq: 'any',
    });

    const whole = await read(runId, TOKEN_CURSOR_START);
    const streamed = whole.flatMap((f) => (f.event.event === 'token' ? [f.event.data.delta] : []));
    expect(streamed.join('')).toBe(answer);
    expect(whole.at(-1)?.event).toEqual({ event: 'end', data: { status: 'completed' } });

    // Cut after every id-bearing frame, resume from it: the rest, no token twice, the same text.
    for (let cut = 1; cut < whole.length; cut += 1) {
      const text = createTokenText();
      const first = await read(runId, TOKEN_CURSOR_START, cut);
      for (const f of first) text.apply(f.event);
      const last = first.findLast((f) => f.id !== undefined)?.id;
      const rest = await read(runId, last ? parseTokenCursor(last)! : TOKEN_CURSOR_START);
      for (const f of rest) text.apply(f.event);
      const tokens = [...first, ...rest].flatMap((f) => (f.event.event === 'token' ? [f.event.data.n] : []));
      expect(new Set(tokens).size, `cut ${cut}`).toBe(tokens.length);
      expect(text.answers()).toEqual([
        { decision: 0, call: 0, text: answer, recorded: true, missing: false },
      ]);
    }
    const info = await (await open()).jsm.streams.info(STREAMS.tokens);
    expect(info.state.consumer_count).toBe(0);
  });

  it('tells a reader to discard an attempt asked again, and to show the recorded one', async () => {
    const runId = 'tok-attempts';
    const { js } = await open();
    let n = 0;
    const first = createLiveTokens(js, runId, 0, { attemptId: () => `first-${(n += 1)}` });
    first.delta(0, 'Bonjour, je ');
    await first.flush();
    const events = runEvents(runId);
    await env.store.append(runId, [events.requested(), events.started()], { expectedSeq: 'any' });
    const frames: TokenFrame[] = [];
    const abort = new AbortController();
    const following = (async () => {
      for await (const f of followTokenFeed(sources, runId, {
        from: TOKEN_CURSOR_START,
        signal: abort.signal,
      }))
        frames.push(f);
    })();
    await retryUntil(() => expect(frames.map((f) => f.event.event)).toEqual(['token']), 10_000);
    // The planner died before recording; another one asks again.
    const second = createLiveTokens(js, runId, 0, { attemptId: () => 'second' });
    second.delta(0, 'Hello');
    second.delta(0, ', world');
    await second.flush();
    const shown = () => {
      const text = createTokenText();
      for (const f of frames) text.apply(f.event);
      return text.text(0, 0);
    };
    await retryUntil(() => expect(shown()).toBe('Hello, world'), 10_000);
    expect(frames.slice(0, 3).map((f) => f.event.event)).toEqual(['token', 'discard', 'token']);
    expect(frames[1]?.event.data).toMatchObject({ attempt: 'first-1', reason: 'asked_again' });
    await env.store.append(
      runId,
      [
        events.make('thought', {
          step: 0,
          model: { id: 'm', promptVersion: '1' },
          content: 'Hello, world',
          decision: { kind: 'complete' },
          usage: { inputTokens: 1, outputTokens: 1 },
          finishReason: 'stop',
        }),
        events.completed(),
      ],
      { expectedSeq: 'any' },
    );
    await following;
    expect(frames.at(-2)?.event).toEqual({
      event: 'final',
      data: { runId, decision: 0, call: 0, text: 'Hello, world' },
    });
    expect(frames.at(-1)?.event.event).toBe('end');
    abort.abort();
  });

  it('ends as soon as its reader aborts, even while it replays the stored text', async () => {
    const runId = 'tok-abort';
    const { js } = await open();
    const live = createLiveTokens(js, runId, 0);
    live.delta(0, 'stored before the reader came');
    await live.flush();
    const abort = new AbortController();
    const frames: TokenFrame[] = [];
    for await (const frame of followTokenFeed(sources, runId, {
      from: TOKEN_CURSOR_START,
      signal: abort.signal,
    })) {
      frames.push(frame);
      abort.abort();
    }
    expect(frames.map((f) => f.event.event)).toEqual(['token']);
  });
});
