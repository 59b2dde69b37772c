// GET /runs/:id/tokens on a real NATS and Postgres: live text read from DURA_TOKENS and the run's log,
// resumed from Last-Event-ID with no gap and no repeat, a new attempt's `discard`, the recorded `final`.
import { describe, expect, it, vi } from 'vitest';
import { parseTokenFeedEvent, type TokenFeedEvent } from '@dura/contracts';
import { createTokenText } from '@dura/core';
import { createLiveTokens } from '@dura/event-store';
import { openSse, type SseConnection } from '@dura/testing';
import { RunScript, thoughtWith } from './support';
import { useProjectorApi } from './projector-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const sys = useProjectorApi(() => ({ keepaliveMs: 200 }));

const tokensUrl = (runId: string) => `${sys().http.url}/runs/${runId}/tokens`;

interface Got {
  id?: string;
  event: TokenFeedEvent;
}

/** Takes frames until `until` says stop (after the frame), or the server ends the stream. */
async function take(sse: SseConnection, until: (got: Got[]) => boolean): Promise<Got[]> {
  const got: Got[] = [];
  for await (const message of sse.messages) {
    const event = parseTokenFeedEvent(message.event, message.data);
    if (!event) continue;
    got.push({ ...(message.id === undefined ? {} : { id: message.id }), event });
    if (until(got)) break;
  }
  return got;
}

/** A reader of the feed that keeps what it took in: the text per call and every token's number. */
function reader() {
  const text = createTokenText();
  const tokens: string[] = [];
  let last: string | undefined;
  return {
    text,
    tokens,
    get last() {
      return last;
    },
    /** Takes frames from `sse` until `done()` holds after one (or the server ends the stream). */
    async read(sse: SseConnection, done: () => boolean): Promise<Got[]> {
      const got = await take(sse, (frames) => {
        const frame = frames.at(-1)!;
        text.apply(frame.event);
        if (frame.id !== undefined) last = frame.id;
        if (frame.event.event === 'token') tokens.push(`${frame.event.data.attempt}#${frame.event.data.n}`);
        return done();
      });
      sse.drop();
      return got;
    },
  };
}

describe('GET /runs/:id/tokens', () => {
  it('resumes from Last-Event-ID with no gap and no repeat, and ends with the recorded answer', async () => {
    const runId = 'tok-resume-1';
    const script = new RunScript(runId).request().start();
    await sys().setup.store.append(runId, [...script.events], { expectedSeq: 'any' });
    const appended = script.events.length;
    const live = createLiveTokens(sys().setup.js, runId, 0);
    const words = Array.from({ length: 30 }, (_, i) => `word${i} `);
    const answer = words.join('');
    const client = reader();

    // Half the answer streams to a first connection, then its network drops.
    const first = await openSse(tokensUrl(runId));
    for (const word of words.slice(0, 15)) live.delta(0, word);
    await client.read(first, () => client.text.text(0, 0) === words.slice(0, 15).join(''));
    // More text comes while the client is away; it reconnects with the last id it got.
    for (const word of words.slice(15, 25)) live.delta(0, word);
    await live.flush();
    const second = await openSse(tokensUrl(runId), client.last);
    await client.read(second, () => client.text.text(0, 0) === words.slice(0, 25).join(''));
    // The rest streams while it is away again; the answer is recorded; a third connection gets the end.
    for (const word of words.slice(25)) live.delta(0, word);
    await live.flush();
    thoughtWith(script, answer).add('run_completed', {});
    await sys().setup.store.append(runId, script.events.slice(appended), { expectedSeq: 'any' });
    const third = await openSse(tokensUrl(runId), client.last);
    const tail = await client.read(third, () => false);

    expect(client.tokens).toEqual([...new Set(client.tokens)]);
    expect(client.text.answers()).toEqual([
      { decision: 0, call: 0, text: answer, recorded: true, missing: false },
    ]);
    expect(tail.map((f) => f.event.event).slice(-2)).toEqual(['final', 'end']);
    // Every text message reached the client once, across three connections.
    expect(client.tokens.length).toBeGreaterThan(0);
    const stored = await sys().setup.jsm.streams.getMessage('DURA_TOKENS', {
      last_by_subj: `dura.tokens.${runId}`,
    });
    const lastN = (JSON.parse(new TextDecoder().decode(stored!.data)) as { n: number }).n;
    expect(client.tokens.map((t) => Number(t.split('#')[1]))).toEqual(
      Array.from({ length: lastN + 1 }, (_, i) => i),
    );
  });

  it('tells the client to discard an attempt that is asked again, and shows only the new one', async () => {
    const runId = 'tok-attempts-1';
    await sys().setup.store.append(runId, [...new RunScript(runId).request().start().events], {
      expectedSeq: 'any',
    });
    const crashed = createLiveTokens(sys().setup.js, runId, 0, { attemptId: () => 'crashed' });
    crashed.delta(0, 'Le paiement ');
    await crashed.flush();
    const client = reader();
    const sse = await openSse(tokensUrl(runId));
    await client.read(sse, () => client.text.text(0, 0) === 'Le paiement ');
    // The planner died before recording; the next one asks again.
    const again = createLiveTokens(sys().setup.js, runId, 0, { attemptId: () => 'again' });
    again.delta(0, 'The payment went through.');
    await again.flush();
    const resumed = await openSse(tokensUrl(runId), client.last);
    const frames = await client.read(resumed, () => client.text.text(0, 0) === 'The payment went through.');
    expect(frames.map((f) => f.event)).toEqual([
      {
        event: 'discard',
        data: { runId, decision: 0, call: 0, attempt: 'crashed', reason: 'asked_again' },
      },
      {
        event: 'token',
        data: { runId, decision: 0, call: 0, attempt: 'again', n: 0, delta: 'The payment went through.' },
      },
    ]);
    // Only the token frame carries an id: a cut before it resends the discard, never the text.
    expect(frames.map((f) => f.id === undefined)).toEqual([true, false]);

    // A page loaded later, without Last-Event-ID, never sees the discarded attempt's text.
    const fresh = reader();
    await fresh.read(
      await openSse(tokensUrl(runId)),
      () => fresh.text.text(0, 0) === 'The payment went through.',
    );
    expect(fresh.tokens).toEqual(['again#0']);
  });

  it('sends a client that comes after the run ended the recorded answers and the end at once', async () => {
    const runId = 'tok-ended-1';
    const script = thoughtWith(new RunScript(runId).request().start(), 'All done.').add('run_completed', {});
    await sys().setup.store.append(runId, [...script.events], { expectedSeq: 'any' });
    const got = await take(await openSse(tokensUrl(runId)), () => false);
    expect(got.map((f) => f.event)).toEqual([
      { event: 'final', data: { runId, decision: 0, call: 0, text: 'All done.' } },
      { event: 'end', data: { status: 'completed' } },
    ]);
    // And resuming after the end is the end again.
    const again = await take(await openSse(tokensUrl(runId), got.at(-1)!.id), () => false);
    expect(again.map((f) => f.event.event)).toEqual(['end']);
  });

  it('refuses a Last-Event-ID it did not send, saying what it expects', async () => {
    const runId = 'tok-resume-1';
    const sse = await openSse(tokensUrl(runId), '42');
    expect(sse.status).toBe(400);
    expect(sse.error).toMatchObject({
      error: { code: 'bad_last_event_id', message: expect.stringContaining('<tokens seq>-<log seq>') },
    });
  });
});
