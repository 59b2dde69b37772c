import { describe, expect, it } from 'vitest';
import { DeadLetterSchema } from '@dura/contracts';
import { buildDeadLetter, DEAD_LETTER_PAYLOAD_LIMIT } from '../src/index';

const now = new Date('2025-05-01T12:00:00.000Z');
const error = { code: 'contract_violation', message: 'task is invalid' };

describe('buildDeadLetter', () => {
  it('keeps a UTF-8 payload verbatim, with the reason and where it came from', () => {
    const letter = buildDeadLetter({
      source: 'tool-gateway',
      subject: 'dura.task.tool.echo',
      data: new TextEncoder().encode('{"runId": "r-1", "tool": "echo" ✓}'),
      error,
      issues: ['args: required'],
      streamSeq: 17,
      deliveries: 1,
      runId: 'r-1',
      now,
    });

    expect(DeadLetterSchema.parse(letter)).toEqual(letter);
    expect(letter).toEqual({
      v: 1,
      source: 'tool-gateway',
      subject: 'dura.task.tool.echo',
      streamSeq: 17,
      deliveries: 1,
      error,
      issues: ['args: required'],
      payload: '{"runId": "r-1", "tool": "echo" ✓}',
      payloadEncoding: 'utf8',
      runId: 'r-1',
      at: '2025-05-01T12:00:00.000Z',
    });
  });

  it('stores bytes that are not UTF-8 as base64, so nothing is lost', () => {
    const data = new Uint8Array([0xff, 0xfe, 0x00, 0x41]);
    const letter = buildDeadLetter({ source: 'planner', subject: 'dura.submit', data, error, now });

    expect(letter.payloadEncoding).toBe('base64');
    expect(new Uint8Array(Buffer.from(letter.payload, 'base64'))).toEqual(data);
    expect(letter).not.toHaveProperty('issues');
    expect(letter).not.toHaveProperty('runId');
    expect(DeadLetterSchema.safeParse(letter).success).toBe(true);
  });
});

describe('buildDeadLetter of a message near the size limit', () => {
  const big = (text: string) => new TextEncoder().encode(text);

  it('keeps the beginning of a large message, marked truncated with its size, so the letter can be published', () => {
    // Quotes double when the letter is serialized: the whole message would not fit in one NATS message.
    const data = big(`{"input":"${'"'.repeat(1_000_000)}`);
    const letter = buildDeadLetter({ source: 'requests', subject: 'dura.submit', data, error, now });

    expect(letter).toMatchObject({ payloadEncoding: 'utf8', truncated: true, payloadBytes: data.length });
    expect(letter.payload).toHaveLength(DEAD_LETTER_PAYLOAD_LIMIT);
    expect(new TextDecoder().decode(data).startsWith(letter.payload)).toBe(true);
    expect(JSON.stringify(letter).length).toBeLessThan(4 * DEAD_LETTER_PAYLOAD_LIMIT);
    expect(DeadLetterSchema.parse(letter)).toEqual(letter);
  });

  it('never cuts a character in half at the limit', () => {
    const data = big(`${'a'.repeat(DEAD_LETTER_PAYLOAD_LIMIT - 1)}✓✓✓`);
    const letter = buildDeadLetter({ source: 'requests', subject: 'dura.submit', data, error, now });

    expect(letter.payload).toBe('a'.repeat(DEAD_LETTER_PAYLOAD_LIMIT - 1));
    expect(letter.truncated).toBe(true);
  });

  it('truncates bytes that are not UTF-8 before encoding them as base64', () => {
    const data = new Uint8Array(DEAD_LETTER_PAYLOAD_LIMIT * 2).fill(0xff);
    const letter = buildDeadLetter({ source: 'decide', subject: 'dura.task.decide', data, error, now });

    expect(letter.payloadEncoding).toBe('base64');
    expect(Buffer.from(letter.payload, 'base64')).toHaveLength(DEAD_LETTER_PAYLOAD_LIMIT);
    expect(letter.payloadBytes).toBe(DEAD_LETTER_PAYLOAD_LIMIT * 2);
  });

  it('caps a long list of issues and a long message', () => {
    const issues = Array.from({ length: 5_000 }, (_, i) => `agent.steps.${i}.tool: ${'x'.repeat(5_000)}`);
    const huge = { code: 'invalid_request', message: 'm'.repeat(100_000) };
    const letter = buildDeadLetter({
      source: 'requests',
      subject: 'dura.submit',
      data: big('{}'),
      error: huge,
      issues,
      now,
    });

    expect(letter.issues).toHaveLength(101);
    expect(letter.issues?.at(-1)).toBe('... and 4900 more issues');
    expect(JSON.stringify(letter).length).toBeLessThan(300_000);
    expect(letter.error.message).toMatch(/more characters\)$/);
  });
});
