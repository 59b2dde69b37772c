import { expect, it } from 'vitest';
import type { FakeLlmReply } from '@dura/testing';
import { adapterKit, failure, type Provider } from './llm-adapter-support';

/** What differs between the adapters in the behaviour they share. */
export interface AdapterCase {
  provider: Provider;
  apiKey: string;
  model: string;
  maxTokens: number;
  /** The prefix of the tool call ids the fake API hands out in these tests. */
  callId: string;
  /** The request fields a call without tools (and without a system prompt) leaves out. */
  plainLeavesOut: string[];
  /** Text the model writes next to two parallel tool calls (none: the answer has no content). */
  parallelContent?: string;
  /** The provider's stop reason for an answer cut at max tokens. */
  lengthStop: string;
  /** What a streaming request body carries. */
  streamBody: object;
  /** A body that is not JSON, and what the error says after 3 attempts. */
  notJson: { body: string; says: string[] };
  /** A reply that is always unavailable, how the error names it, the attempts, and the sleeps between them (when checked). */
  unavailable: { reply: FakeLlmReply; says: string; attempts: number; sleeps?: number };
  /** The error body of a 400, and how the adapter's message starts. */
  rejected: { body: object; says: RegExp };
  names: { parallelCalls: string; lengthStop: string; streamedCalls: string };
}

/** The tests both adapters pass alike, in the caller's describe: answers, tool calls, streams, bad bodies. */
export function itAnswersAsEveryAdapter(c: AdapterCase): void {
  const { setup, request } = adapterKit(c.provider, c);

  it('returns a plain completion with usage, finish reason and model id', async () => {
    await using t = await setup([
      {
        kind: 'message',
        content: 'All done.',
        usage: { inputTokens: 40, outputTokens: 3 },
        model: `${c.model}-2025`,
      },
    ]);
    const answer = await t.provider.chat(request({ tools: [] }));
    expect(answer).toEqual({
      content: 'All done.',
      toolCalls: [],
      usage: { inputTokens: 40, outputTokens: 3 },
      finishReason: 'stop',
      modelId: `${c.model}-2025`,
    });
    for (const field of c.plainLeavesOut) expect(t.server.requests[0]!.body).not.toHaveProperty(field);
  });

  it(c.names.parallelCalls, async () => {
    await using t = await setup([
      {
        kind: 'message',
        ...(c.parallelContent === undefined ? {} : { content: c.parallelContent }),
        toolCalls: [
          { id: `${c.callId}_a`, name: 'pay__charge', arguments: { amount: 5 } },
          { id: `${c.callId}_b`, name: 'demo__notify', arguments: { channel: 'ops', message: 'charged' } },
        ],
      },
    ]);
    const answer = await t.provider.chat(request());
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.content).toBe(c.parallelContent);
    expect(answer.toolCalls).toEqual([
      { id: `${c.callId}_a`, name: 'pay.charge', arguments: { amount: 5 } },
      { id: `${c.callId}_b`, name: 'demo.notify', arguments: { channel: 'ops', message: 'charged' } },
    ]);
  });

  it(c.names.lengthStop, async () => {
    await using t = await setup([{ kind: 'message', content: 'Cut', stop: c.lengthStop }]);
    expect((await t.provider.chat(request())).finishReason).toBe('length');
  });

  it('streams text deltas in order, and the answer is their concatenation', async () => {
    await using t = await setup([
      {
        kind: 'message',
        content: 'The charge went through; receipt sent.',
        usage: { inputTokens: 9, outputTokens: 8 },
      },
    ]);
    const deltas: string[] = [];
    const answer = await t.provider.chat(request({ onDelta: (text) => deltas.push(text) }));

    expect(t.server.requests[0]!.body).toMatchObject(c.streamBody);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('The charge went through; receipt sent.');
    expect(answer).toEqual({
      content: 'The charge went through; receipt sent.',
      toolCalls: [],
      usage: { inputTokens: 9, outputTokens: 8 },
      finishReason: 'stop',
      modelId: c.model,
    });
  });

  it(c.names.streamedCalls, async () => {
    await using t = await setup([
      {
        kind: 'message',
        content: 'Doing both.',
        toolCalls: [
          { id: `${c.callId}_a`, name: 'pay__charge', arguments: { amount: 12.5, currency: 'EUR' } },
          {
            id: `${c.callId}_b`,
            name: 'demo__notify',
            arguments: { channel: 'ops', message: 'charged 12.50' },
          },
        ],
      },
    ]);
    const deltas: string[] = [];
    const answer = await t.provider.chat(request({ onDelta: (text) => deltas.push(text) }));
    expect(deltas.join('')).toBe('Doing both.');
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.toolCalls).toEqual([
      { id: `${c.callId}_a`, name: 'pay.charge', arguments: { amount: 12.5, currency: 'EUR' } },
      { id: `${c.callId}_b`, name: 'demo.notify', arguments: { channel: 'ops', message: 'charged 12.50' } },
    ]);
  });

  it('retries a body that is not JSON, then fails with model_bad_response', async () => {
    await using t = await setup([{ kind: 'raw', body: c.notJson.body }], { maxAttempts: 3 });
    const err = await failure(t.provider.chat(request()));
    expect(err.code).toBe('model_bad_response');
    for (const text of c.notJson.says) expect(err.message).toContain(text);
    expect(t.server.requests).toHaveLength(3);
  });

  it('rejects a 400 at once with the provider message and what to check', async () => {
    await using t = await setup([{ kind: 'status', status: 400, body: c.rejected.body }]);
    const err = await failure(t.provider.chat(request()));
    expect(err.code).toBe('model_request_rejected');
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(c.rejected.says);
    expect(err.message).toContain("Check the agent's model settings");
    expect(t.server.requests).toHaveLength(1);
    expect(t.sleeps).toEqual([]);
  });

  it('gives up with a retryable model_unavailable after maxAttempts', async () => {
    const { reply, says, attempts, sleeps } = c.unavailable;
    await using t = await setup([reply], { maxAttempts: attempts });
    const err = await failure(t.provider.chat(request()));
    expect(err.code).toBe('model_unavailable');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain(`after ${attempts} attempts`);
    expect(err.message).toContain(says);
    expect(t.server.requests).toHaveLength(attempts);
    if (sleeps !== undefined) expect(t.sleeps).toHaveLength(sleeps);
  });
}
