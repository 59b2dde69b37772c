import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DuraError, type JsonValue } from '@dura/contracts';
import { canonicalJson } from '../src/index';
import { arbJsonValue } from '../src/testing';
import { reorderKeys } from './reorder-keys';

/** The IEEE 754 double with the given bit pattern. */
function fromHex(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('canonicalJson against RFC 8785', () => {
  it('serialises the example of section 3.2.2 (literals, numbers, string escapes, key order)', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        ' "literals": [null, true, false]}',
    ) as JsonValue;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units as in section 3.2.3', () => {
    const input: JsonValue = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    const keys = Object.keys(JSON.parse(canonicalJson(input)) as object);
    // Integer-like keys come first in any JS object, so compare the order of the others as serialised.
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis",' +
        '"€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    expect(keys).toHaveLength(7);
  });

  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('writes the number %s as %s (appendix B)', (hex, expected) => {
    expect(canonicalJson(fromHex(hex))).toBe(expected);
  });

  it('writes nesting without whitespace and drops undefined members', () => {
    const value = { b: [1, { d: 'x', c: null }], a: {}, e: [], u: undefined } as unknown as JsonValue;
    expect(canonicalJson(value)).toBe('{"a":{},"b":[1,{"c":null,"d":"x"}],"e":[]}');
  });

  it.each([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['NaN inside an object', { a: [1, NaN] }],
    ['Infinity deep in an array', [[{ x: Infinity }]]],
  ])('refuses %s with a DuraError', (_name, value) => {
    expect(() => canonicalJson(value)).toThrow(DuraError);
    try {
      canonicalJson(value);
    } catch (error) {
      expect(error).toMatchObject({ code: 'not_json', retryable: false });
    }
  });

  it('refuses values JSON has no form for', () => {
    expect(() => canonicalJson((() => 1) as unknown as JsonValue)).toThrow(DuraError);
    expect(() => canonicalJson([undefined] as unknown as JsonValue)).toThrow(DuraError);
  });
});

describe('canonicalJson properties', () => {
  it('parses back to the same value (with -0 written as 0, like JSON.stringify and the RFC)', () => {
    fc.assert(
      fc.property(arbJsonValue(4), (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('does not depend on key order at any depth', () => {
    fc.assert(
      fc.property(arbJsonValue(4), fc.array(fc.nat()), (value, seed) => {
        expect(canonicalJson(reorderKeys(value, seed))).toBe(canonicalJson(value));
      }),
      { numRuns: 300 },
    );
  });

  it('is a fixed point: canonical JSON of canonical JSON is itself', () => {
    fc.assert(
      fc.property(arbJsonValue(4), (value) => {
        const once = canonicalJson(value);
        expect(canonicalJson(JSON.parse(once) as JsonValue)).toBe(once);
      }),
    );
  });
});
