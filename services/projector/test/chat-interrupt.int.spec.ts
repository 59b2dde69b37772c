// PROJECTOR_CHAT_DOUBLE_TEXTING=interrupt on real NATS and Postgres: a message sent while the chat's turn
// runs cancels that turn (a `cancel` signal to its run) and starts the next one; a caller without the
// `cancel` scope is refused, told so, and nothing is cancelled or started. The planner's part (taking up the
// requests, recording the cancel) is written to the log as it would write it.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { STREAMS, SUBJECTS } from '@dura/contracts';
import { RunScript } from './support';
import { callApi, useProjectorApi, tokenAuth } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const TOKENS = {
  chatter: 'chatter-0123456789abcdef',
  interrupter: 'interrupter-0123456789abcdef',
};
const tokenFile = JSON.stringify([
  { name: 'chatter', token: TOKENS.chatter, tenant: 'acme', scopes: ['submit', 'read'] },
  { name: 'interrupter', token: TOKENS.interrupter, tenant: 'acme', scopes: ['submit', 'read', 'cancel'] },
]);
const sys = useProjectorApi(() => ({ auth: tokenAuth(tokenFile), chatDoubleTexting: 'interrupt' }));
const streams: AbortController[] = [];
// Registered after the API's own hooks, so the streams end before the API closes.
afterAll(() => {
  for (const stream of streams) stream.abort();
});

/** Sends one user message of chat `c1`; answers the status (the turn's stream is left open, then dropped). */
async function say(token: string, id: string, text: string): Promise<{ status: number; body: string }> {
  const stop = new AbortController();
  streams.push(stop);
  const response = await fetch(`${sys().http.url}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 'c1',
      messages: [{ id, role: 'user', parts: [{ type: 'text', text }] }],
      agent: { name: 'chat-assistant' },
    }),
    signal: stop.signal,
  });
  const body = response.status === 200 ? '' : await response.text();
  stop.abort();
  return { status: response.status, body };
}

async function turns(): Promise<{ runId: string; status: string }[]> {
  const answer = await callApi(sys().http.url, TOKENS.chatter, 'GET', '/chat/c1/messages');
  expect(answer.status).toBe(200);
  return answer.body['turns'] as { runId: string; status: string }[];
}

async function last(subject: string): Promise<Record<string, unknown> | undefined> {
  const msg = await sys().setup.jsm.streams.getMessage(STREAMS.requests, { last_by_subj: subject });
  return msg ? msg.json<Record<string, unknown>>() : undefined;
}

describe('POST /chat with PROJECTOR_CHAT_DOUBLE_TEXTING=interrupt', () => {
  it('cancels the running turn and starts the next; without scope cancel it refuses, saying so', async () => {
    expect((await say(TOKENS.chatter, 'm1', 'tell me a story')).status).toBe(200);
    const [first] = await turns();
    expect(first).toBeDefined();
    // The planner takes the turn up: it runs (and, below, records the cancel).
    const planned = new RunScript(first!.runId)
      .request([], { tenant: 'acme' })
      .start()
      .add('run_cancelled', { reason: 'interrupted by the message m2' });
    for (const event of planned.events.slice(0, 2))
      await sys().setup.store.append(first!.runId, [event], { expectedSeq: 'any' });
    const signalBefore = await last(SUBJECTS.signal);

    // Without scope cancel: refused, naming the scope; the running turn goes on, nothing new starts.
    const refused = await say(TOKENS.chatter, 'm2', 'no, something else');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: {
        code: 'insufficient_scope',
        message: expect.stringContaining(
          'a message that interrupts the running turn needs scope "cancel"; the credential "chatter" has submit, read',
        ) as string,
      },
    });
    expect(await last(SUBJECTS.signal)).toEqual(signalBefore);
    expect((await turns()).map((t) => t.runId)).toEqual([first!.runId]);

    // With it: the running turn is sent `cancel`, and the message starts the next turn.
    expect((await say(TOKENS.interrupter, 'm2', 'no, something else')).status).toBe(200);
    expect(await last(SUBJECTS.signal)).toMatchObject({
      runId: first!.runId,
      name: 'cancel',
      payload: { reason: 'interrupted by the message m2' },
    });
    const next = await turns();
    expect(next).toHaveLength(2);
    expect(next[1]!.runId).toBe(first!.runId.replace(/-0$/, '-1'));
    // The new turn's request: the message, and no history (the interrupted turn's answer is not in it).
    expect(await last(SUBJECTS.submit)).toMatchObject({
      runId: next[1]!.runId,
      input: { chatId: 'c1', messageId: 'm2', message: 'no, something else', history: [] },
    });

    // The planner records the cancel: the chat shows the first turn cancelled, the second one after it.
    await sys().setup.store.append(first!.runId, [planned.events[2]!], { expectedSeq: 'any' });
    await expect.poll(async () => (await turns())[0]?.status, { timeout: 20_000 }).toBe('cancelled');
  });
});
