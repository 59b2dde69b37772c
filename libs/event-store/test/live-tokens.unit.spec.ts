import type { JetStreamClient } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import type { TokenMessage } from '@dura/contracts';
import { createLiveTokens } from '../src/index';

/** A JetStream publish that waits for `release()` per message and refuses the message numbers in `refuse`. */
function fakeStream(refuse: (message: TokenMessage, attempt: number) => boolean = () => false) {
  const stored: TokenMessage[] = [];
  const waiting: (() => void)[] = [];
  const tries = new Map<string, number>();
  const js = {
    publish(_subject: string, data: string, options: { msgID: string }) {
      const message = JSON.parse(data) as TokenMessage;
      const attempt = (tries.get(options.msgID) ?? 0) + 1;
      tries.set(options.msgID, attempt);
      return new Promise((resolve, reject) =>
        waiting.push(() => {
          if (refuse(message, attempt)) reject(new Error('no responders'));
          else {
            stored.push(message);
            resolve({ seq: stored.length, duplicate: false, stream: 'DURA_TOKENS' });
          }
        }),
      );
    },
  } as unknown as JetStreamClient;
  return {
    js,
    stored,
    /** Lets every publish waiting now answer. */
    release: async () => {
      while (waiting.length > 0) {
        for (const answer of waiting.splice(0)) answer();
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

describe('createLiveTokens', () => {
  it('hands text over without waiting, one publish in flight per call, what came meanwhile as the next message', async () => {
    const stream = fakeStream();
    const live = createLiveTokens(stream.js, 'run-1', 0, { attemptId: () => 'a' });
    live.delta(0, 'Hel');
    live.delta(0, 'lo, ');
    live.delta(0, 'world');
    await stream.release();
    await live.flush();
    expect(stream.stored).toEqual([
      { runId: 'run-1', decision: 0, call: 0, attempt: 'a', n: 0, delta: 'Hel' },
      { runId: 'run-1', decision: 0, call: 0, attempt: 'a', n: 1, delta: 'lo, world' },
    ]);
  });

  it('retries a refused message under its msg-id, then gives its number up so readers see a gap', async () => {
    const lost: string[] = [];
    const stream = fakeStream((message) => message.n === 1);
    const live = createLiveTokens(stream.js, 'run-1', 2, {
      attemptId: () => 'a',
      onLost: (attempt) => lost.push(attempt),
    });
    live.delta(1, 'one ');
    await stream.release();
    live.delta(1, 'two ');
    await stream.release();
    live.delta(1, 'three');
    await stream.release();
    await live.flush();
    expect(stream.stored.map((m) => [m.n, m.delta])).toEqual([
      [0, 'one '],
      [2, 'three'],
    ]);
    expect(lost).toEqual(['a']);
  });

  it('starts a new attempt on restart: text not yet sent of the old one is void', async () => {
    let next = 0;
    const stream = fakeStream();
    const live = createLiveTokens(stream.js, 'run-1', 0, { attemptId: () => `a${(next += 1)}` });
    live.restart(0); // nothing sent yet: still the first attempt
    live.delta(0, 'Bonj');
    live.delta(0, 'our'); // waits behind the first publish
    live.restart(0);
    live.delta(0, 'Hello');
    await stream.release();
    await live.flush();
    expect(stream.stored.map((m) => [m.attempt, m.n, m.delta])).toEqual([
      ['a1', 0, 'Bonj'],
      ['a2', 0, 'Hello'],
    ]);
  });
});
