import { describe, expect, it } from 'vitest';
import { DeadLetterSchema } from '@dura/contracts';
import { buildDeadLetter } from '../src/index';

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
