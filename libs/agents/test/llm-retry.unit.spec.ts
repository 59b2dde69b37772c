import { describe, expect, it } from 'vitest';
import { SseParser, backoffMs, redact, retryAfterMs } from '../src/llm/index';

describe('Retry-After', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  const headers = (entries: Record<string, string>) => new Headers(entries);

  it('reads seconds, HTTP dates and retry-after-ms', () => {
    expect(retryAfterMs(headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryAfterMs(headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(retryAfterMs(headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:07 GMT' }), now)).toBe(7000);
    expect(retryAfterMs(headers({ 'retry-after': 'Mon, 31 Dec 2029 23:59:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(headers({ 'retry-after-ms': '1200', 'retry-after': '2' }), now)).toBe(1200);
  });

  it('ignores what it cannot read', () => {
    expect(retryAfterMs(headers({}), now)).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after-ms': 'x', 'retry-after': '2' }), now)).toBe(2000);
  });
});

describe('backoff', () => {
  const settings = { initialBackoffMs: 400, maxBackoffMs: 5_000 };

  it('doubles per attempt, with jitter between half and the whole step, up to the cap', () => {
    expect(backoffMs(1, settings, () => 0)).toBe(200);
    expect(backoffMs(1, settings, () => 1)).toBe(400);
    expect(backoffMs(3, settings, () => 0.5)).toBe(1200);
    expect(backoffMs(10, settings, () => 1)).toBe(5_000);
    expect(backoffMs(10, settings, () => 0)).toBe(2_500);
  });
});

describe('redaction', () => {
  const key = 'sk-proj-abcdef1234567890XYZ';

  it('removes the key and key-like words that start like it', () => {
    expect(redact(`bad key ${key}!`, key)).toBe('bad key [redacted]!');
    expect(redact('Incorrect API key provided: sk-proj-****************0XYZ.', key)).toBe(
      'Incorrect API key provided: [redacted]',
    );
    expect(redact('nothing secret here', key)).toBe('nothing secret here');
  });

  it('leaves text alone when there is no key', () => {
    expect(redact('sk-proj-abc', undefined)).toBe('sk-proj-abc');
  });
});

describe('the SSE parser', () => {
  const stream =
    'event: message_start\ndata: {"a":1}\n\n: keep-alive\n\ndata: line one\ndata: line two\r\n\r\ndata:no-space\r\rdata: [DONE]\n\n';
  const expected = [
    { event: 'message_start', data: '{"a":1}' },
    { event: 'message', data: 'line one\nline two' },
    { event: 'message', data: 'no-space' },
    { event: 'message', data: '[DONE]' },
  ];

  it('reads events, comments, multi-line data and every line ending', () => {
    expect(new SseParser().push(stream)).toEqual(expected);
  });

  it('gives the same events however the text is split', () => {
    for (let size = 1; size <= 7; size += 1) {
      const parser = new SseParser();
      const events = [];
      for (let i = 0; i < stream.length; i += size) events.push(...parser.push(stream.slice(i, i + size)));
      expect(events).toEqual(expected);
    }
  });

  it('holds back an event until its blank line arrives', () => {
    const parser = new SseParser();
    expect(parser.push('data: partial')).toEqual([]);
    expect(parser.push('\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ event: 'message', data: 'partial' }]);
  });
});
