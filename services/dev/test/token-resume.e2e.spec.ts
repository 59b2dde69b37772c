// The token stream a browser can resume, on real processes: a code agent's model answer streams through
// GET /runs/:id/tokens; the planner is SIGKILLed mid-answer and a new one asks the model again (a second
// attempt with another text); a client that drops and reconnects with Last-Event-ID twice is told to discard
// the first attempt, never shows a mix of the two, sees no token twice, and ends with exactly the recorded answer.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJournal } from '@dura/code-agents/engine';
import { parseTokenFeedEvent, type TokenFeedEvent } from '@dura/contracts';
import { createTokenText, type TokenText } from '@dura/core';
import {
  eventually,
  openSse,
  startFakeLlmServer,
  type FakeLlmServer,
  type SseConnection,
} from '@dura/testing';
import { logOf, useCrashSystem, watchToEnd } from './crash-harness';
import type { WireBody } from './agent-support';

const AGENTS = fileURLToPath(new URL('./fixtures/code-model-agents.ts', import.meta.url));
// Long enough, in small slow pieces, that the planner dies while the first answer streams.
const FIRST = Array.from({ length: 30 }, (_, i) => `first-${i} `).join('');
const SECOND = Array.from({ length: 20 }, (_, i) => `second-${i} `).join('');

let llm: FakeLlmServer | undefined;
const asked = new Map<string, number>();

beforeAll(async () => {
  llm = await startFakeLlmServer({
    provider: 'openai',
    respond: ({ body }) => {
      const prompt = (body as WireBody).messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
      const n = (asked.get(prompt) ?? 0) + 1;
      asked.set(prompt, n);
      return n === 1
        ? { kind: 'message', content: FIRST, pieceChars: 9, pieceDelayMs: 200 }
        : { kind: 'message', content: SECOND, pieceChars: 10, pieceDelayMs: 60 };
    },
  });
});
afterAll(async () => {
  await llm?.close();
});

const env = (): Record<string, string> => ({ DURA_AGENTS: AGENTS, CODE_MODEL_URL: llm?.url ?? '' });
const crash = useCrashSystem(['planner', 'tool-gateway', 'projector'], {
  env: (name): Record<string, string> => (name === 'planner' ? env() : {}),
});

/** A browser's view of the token stream: what it shows, the id to resume from, what it was sent. */
class Page {
  readonly text: TokenText = createTokenText();
  readonly events: TokenFeedEvent[] = [];
  readonly tokens: string[] = [];
  last: string | undefined;

  constructor(private readonly url: string) {}

  /** Connects (with Last-Event-ID once it has one) and reads until `done` holds or the stream ends. */
  async read(done: () => boolean): Promise<void> {
    const sse: SseConnection = await openSse(this.url, this.last);
    expect(sse.status, JSON.stringify(sse.error)).toBe(200);
    try {
      for await (const message of sse.messages) {
        const event = parseTokenFeedEvent(message.event, message.data);
        if (!event) continue;
        if (message.id !== undefined) this.last = message.id;
        this.events.push(event);
        this.text.apply(event);
        if (event.event === 'token') this.tokens.push(`${event.data.attempt}#${event.data.n}`);
        // Never a mix of two attempts: what is shown is a prefix of one answer.
        const shown = this.text.text(0, 0);
        expect(FIRST.startsWith(shown) || SECOND.startsWith(shown), `shown: ${shown}`).toBe(true);
        if (done()) return;
      }
    } finally {
      sse.drop();
    }
  }
}

describe('a token stream resumed across a planner killed mid-answer', () => {
  it('ends with exactly the recorded answer: the lost attempt discarded, no token twice', async () => {
    const sys = crash();
    const runId = 'tok-crash-1';
    await sys.submit({ runId, agent: { kind: 'agent', name: 'code-model-teller' }, input: 'dragons' });
    const url = `${sys.system.apiUrl}/runs/${runId}/tokens`;
    await eventually(
      async () => ((await fetch(`${sys.system.apiUrl}/runs/${runId}`)).status === 200 ? true : undefined),
      'the run in the projection',
      30_000,
    );
    const page = new Page(url);

    // The first answer streams; mid-answer the page loses its connection and the planner is killed.
    await page.read(() => page.text.text(0, 0).length >= 27);
    await sys.proc('planner').kill('SIGKILL');
    expect(asked.get('tell dragons')).toBe(1);
    await sys.restart('planner', undefined, env());

    // Back, it resumes from its last id: told to drop the first attempt, then the second streams; it drops again.
    await page.read(() => page.text.text(0, 0).length >= 20 && SECOND.startsWith(page.text.text(0, 0)));
    expect(page.events).toContainEqual({
      event: 'discard',
      data: { runId, decision: 0, call: 0, attempt: expect.any(String), reason: 'asked_again' },
    });
    // And once more, to the end.
    await page.read(() => false);

    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    const thought = (await logOf(sys, runId)).find((e) => e.type === 'thought');
    const recorded = decodeJournal(thought?.type === 'thought' ? thought.data.content : undefined);
    expect(recorded.map((entry) => entry.k === 'model' && entry.a.content)).toEqual([SECOND]);
    expect(page.text.answers()).toEqual([
      { decision: 0, call: 0, text: SECOND, recorded: true, missing: false },
    ]);
    expect(page.text.ended).toBe('completed');
    expect(page.tokens).toEqual([...new Set(page.tokens)]);
    // The model was asked again only because the first answer was never recorded; never after.
    expect(asked.get('tell dragons')).toBe(2);
  });
});
