import { describe, expect, it } from 'vitest';
import { mayHoldUnstorable } from '../src/unstorable';

const text = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('mayHoldUnstorable', () => {
  it('finds U+0000 and surrogate escapes wherever they stand, in either case', () => {
    expect(mayHoldUnstorable(text({ a: 'x\u0000y' }))).toBe(true);
    expect(mayHoldUnstorable(text({ a: '\ud800' }))).toBe(true);
    expect(mayHoldUnstorable(Buffer.from('{"a":"\\uDC00"}'))).toBe(true);
    expect(mayHoldUnstorable(Buffer.from('{"a":"\\u00e9 then \\ud83d\\ude00"}'))).toBe(true);
    expect(mayHoldUnstorable(Buffer.from('{"a":"ends in \\u'))).toBe(false);
  });

  it('passes text with no such escape, other escapes included', () => {
    expect(mayHoldUnstorable(text({ a: 'plain', b: [1, 2, { c: 'é😀' }] }))).toBe(false);
    expect(mayHoldUnstorable(Buffer.from('{"a":"\\u00e9\\u001f\\n"}'))).toBe(false);
  });

  it('errs toward a look when a backslash of the text stands before "u0000" (the event is then walked)', () => {
    expect(mayHoldUnstorable(text({ a: '\\u0000' }))).toBe(true);
  });
});
