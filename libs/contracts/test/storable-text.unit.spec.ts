import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storableText, unstorableTextPath } from '../src/index';

describe('unstorableTextPath', () => {
  it.each([
    [{ a: 'fine', b: ['x', 'nul\u0000'] }, 'b.1'],
    [{ input: { deep: '\ud800' } }, 'input.deep'],
    [['\udc00 trailing low'], '(root).0'],
    [{ 'key\u0000': 1 }, '(root) (a key)'],
    ['\u0000', '(root)'],
  ])('finds the first string that cannot be stored in %j', (value, path) => {
    expect(unstorableTextPath(value)).toBe(path);
  });

  it('accepts text with proper surrogate pairs, other control characters and any JSON shape', () => {
    expect(
      unstorableTextPath({ emoji: '😀', tab: '\t\u0001\u001f', n: 1, z: null, list: [true] }),
    ).toBeUndefined();
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const holds = JSON.stringify(value).match(/\\u0000|\\ud[89ab]|\\ud[c-f]/) !== null;
        // JSON.stringify escapes exactly the characters looked for (lone surrogates as \udXXX, NUL as \u0000).
        if (!holds) expect(unstorableTextPath(value)).toBeUndefined();
      }),
      { seed: 7, numRuns: 300 },
    );
  });

  it('walks deeper than the call stack would go', () => {
    let deep: unknown = 'a\u0000';
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(unstorableTextPath(deep)).toMatch(/^\(root\)(\.0)+$/);
  });
});

describe('storableText', () => {
  it('replaces what cannot be stored and keeps the rest', () => {
    expect(storableText('a\u0000b\ud800c😀')).toBe('a\ufffdb\ufffdc😀');
  });
});
