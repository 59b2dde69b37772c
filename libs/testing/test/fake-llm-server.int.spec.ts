// The fake provider tells its `respond` when a caller gave up on a call (closed the connection before the
// answer was complete), as a provider counting calls in flight sees it; an answered call is never given up.
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, startFakeLlmServer, type FakeLlmServer } from '../src/index';

const servers: FakeLlmServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const body = JSON.stringify({ model: 'fake-1', messages: [{ role: 'user', content: 'hi' }] });

describe('startFakeLlmServer', () => {
  it('aborts `gone` when the caller closes the connection mid-call, and not once the call was answered', async () => {
    const signals: AbortSignal[] = [];
    const server = await startFakeLlmServer({
      provider: 'openai',
      respond: async ({ index, gone }) => {
        signals.push(gone);
        // The first call is answered only once its caller gave up on it.
        if (index === 0) await new Promise((resolve) => gone.addEventListener('abort', resolve));
        return { kind: 'message', content: 'done' };
      },
    });
    servers.push(server);
    const post = (signal?: AbortSignal) =>
      fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        ...(signal ? { signal } : {}),
      });

    const caller = new AbortController();
    const abandoned = post(caller.signal);
    await eventually(() => Promise.resolve(signals[0]), 'the first call to reach the fake');
    expect(signals[0]?.aborted).toBe(false);
    caller.abort();
    await expect(abandoned).rejects.toThrow();
    await eventually(
      () => Promise.resolve(signals[0]?.aborted ? true : undefined),
      '`gone` of the call given up on',
    );

    const answered = await post();
    expect(answered.status).toBe(200);
    await answered.json();
    expect(signals[1]?.aborted).toBe(false);
  });
});
