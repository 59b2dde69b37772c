import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ToolNameSchema } from '@dura/contracts';
import { ToolNames, duraToolName, providerToolName } from '../src/llm/index';

const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Any valid Dura tool name, with the awkward parts (underscores next to dots, long names) well represented. */
const duraName = fc
  .array(fc.stringMatching(/^[a-z][a-z0-9_-]{0,20}$/), { minLength: 1, maxLength: 6 })
  .map((segments) => segments.join('.'))
  .filter((name) => ToolNameSchema.safeParse(name).success);

describe('tool names between Dura and providers', () => {
  it('turns dots into double underscores and back', () => {
    expect(providerToolName('pay.charge')).toBe('pay__charge');
    expect(providerToolName('http.request')).toBe('http__request');
    expect(providerToolName('echo')).toBe('echo');
    expect(providerToolName('a.b-c.d_e')).toBe('a__b-c__d_e');
    expect(providerToolName('a.b_')).toBe('a__b_');
    expect(duraToolName('pay__charge')).toBe('pay.charge');
    expect(duraToolName('a__b-c__d_e')).toBe('a.b-c.d_e');
  });

  it('gives names whose plain form would not map back a hashed form, mapped back through ToolNames', () => {
    const awkward = [
      'my__tool',
      'a_.b',
      'pay.card__charge',
      'x'.repeat(70),
      `billing.${'y'.repeat(60)}.charge`,
    ];
    const names = new ToolNames(awkward);
    for (const name of awkward) {
      const provider = providerToolName(name);
      expect(provider).toMatch(PROVIDER_NAME);
      expect(provider).toContain('___');
      expect(names.toDura(provider)).toBe(name);
    }
    expect(providerToolName('my__tool')).not.toBe(providerToolName('my.tool'));
  });

  it('maps names the call does not know with the plain rule', () => {
    expect(new ToolNames([]).toDura('made__up__tool')).toBe('made.up.tool');
  });

  it('collects names from the tools offered and from earlier calls and results', () => {
    const long = `x.${'z'.repeat(70)}`;
    const names = ToolNames.forCall(
      [],
      [
        { role: 'assistant', toolCalls: [{ id: 'c1', name: long, arguments: {} }] },
        { role: 'tool', toolCallId: 'c1', name: 'my__tool', content: 'ok' },
      ],
    );
    expect(names.toDura(providerToolName(long))).toBe(long);
    expect(names.toDura(providerToolName('my__tool'))).toBe('my__tool');
  });

  it('maps every valid Dura name to a valid provider name and back', () => {
    fc.assert(
      fc.property(duraName, (name) => {
        const provider = providerToolName(name);
        expect(provider).toMatch(PROVIDER_NAME);
        expect(new ToolNames([name]).toDura(provider)).toBe(name);
      }),
      { numRuns: 500 },
    );
  });

  it('never maps two different Dura names to one provider name', () => {
    fc.assert(
      fc.property(fc.uniqueArray(duraName, { minLength: 2, maxLength: 30 }), (list) => {
        const providers = list.map(providerToolName);
        expect(new Set(providers).size).toBe(list.length);
        expect(() => new ToolNames(list)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
