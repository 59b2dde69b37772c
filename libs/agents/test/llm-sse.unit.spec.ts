import { describe, expect, it } from 'vitest';
import { AttemptFailure } from '../src/llm/errors';
import { MAX_SSE_EVENT_CHARS, SseParser, readSse } from '../src/llm/sse';

const bodyOf = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

async function collect(body: ReadableStream<Uint8Array>) {
  const events = [];
  for await (const event of readSse(body)) events.push(event);
  return events;
}

describe('reading SSE bodies', () => {
  it('decodes UTF-8 split across chunks and ignores ids and retry fields', async () => {
    const bytes = new TextEncoder().encode('id: 7\nretry: 10\nevent: delta\ndata: {"text":"héllo ✓"}\n\n');
    const cut = bytes.indexOf(0xa9); // inside "é"
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, cut));
        controller.enqueue(bytes.slice(cut));
        controller.close();
      },
    });
    expect(await collect(body)).toEqual([{ event: 'delta', data: '{"text":"héllo ✓"}' }]);
  });

  it('drops an event the stream cut off before its blank line', async () => {
    expect(await collect(bodyOf('data: whole\n\n', 'data: cut'))).toEqual([
      { event: 'message', data: 'whole' },
    ]);
  });

  it('refuses an event longer than the limit as a malformed answer', () => {
    const parser = new SseParser(1_000);
    expect(parser.push(`data: ${'x'.repeat(900)}\n\n`)).toHaveLength(1);
    const push = () => parser.push(`data: ${'x'.repeat(600)}\ndata: ${'y'.repeat(600)}`);
    expect(push).toThrow(AttemptFailure);
    expect(push).toThrow('a stream event is longer than 1000 characters');
    expect(MAX_SSE_EVENT_CHARS).toBeGreaterThanOrEqual(1024 * 1024);
  });

  it('refuses an over-long event in a body, however it is split', () => {
    const parser = new SseParser(100);
    expect(() => {
      for (let i = 0; i < 20; i += 1) parser.push(i === 0 ? 'data: ' : 'xxxxxxxxxx');
    }).toThrow(AttemptFailure);
  });
});
