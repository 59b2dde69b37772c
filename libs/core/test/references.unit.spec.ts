import { describe, expect, it } from 'vitest';
import { DuraError, type JsonValue, type ScriptedStep } from '@dura/contracts';
import { BadReference, planReferenceIssues, resolveReferences, type ReferenceScope } from '../src/index';

const scope: ReferenceScope = {
  results: new Map<number, JsonValue>([
    [1, { imageTag: 'registry.acme.dev/web:3f9c2e1', digest: { algo: 'sha256', hex: 'ab12' } }],
    [2, { urls: ['https://a', 'https://b'], ok: true, count: 0, none: null }],
    [3, 'plain text result'],
  ]),
  input: { service: 'web', env: { name: 'staging', region: 'eu' } },
};

const resolve = (value: JsonValue) => resolveReferences(value, scope);

function badReference(value: JsonValue): BadReference {
  try {
    resolve(value);
  } catch (error) {
    expect(error).toBeInstanceOf(BadReference);
    expect(error).toBeInstanceOf(DuraError);
    return error as BadReference;
  }
  throw new Error(`expected ${JSON.stringify(value)} not to resolve`);
}

describe('resolveReferences', () => {
  it('replaces "$steps.1.imageTag" with the field of step 1 result', () => {
    expect(resolve({ image: '$steps.1.imageTag' })).toEqual({ image: 'registry.acme.dev/web:3f9c2e1' });
  });

  it('follows nested fields and array indexes, and keeps the type of the value', () => {
    expect(resolve('$steps.1.digest.hex')).toBe('ab12');
    expect(resolve('$steps.1.digest')).toEqual({ algo: 'sha256', hex: 'ab12' });
    expect(resolve('$steps.2.urls.1')).toBe('https://b');
    expect(resolve(['$steps.2.ok', '$steps.2.count', '$steps.2.none'])).toEqual([true, 0, null]);
    expect(resolve('$steps.3')).toBe('plain text result');
  });

  it('reads the run input with "$input.x", nested, or whole', () => {
    expect(resolve({ svc: '$input.service', region: '$input.env.region' })).toEqual({
      svc: 'web',
      region: 'eu',
    });
    expect(resolve('$input')).toEqual(scope.input);
  });

  it('resolves references at any depth and leaves everything else alone', () => {
    const args: JsonValue = {
      deploy: { image: '$steps.1.imageTag', targets: [{ env: '$input.env.name' }, 'static'] },
      price: '$5.00',
      note: 'see $steps.1.imageTag',
      n: 7,
      flag: false,
      nothing: null,
    };
    expect(resolve(args)).toEqual({
      deploy: { image: 'registry.acme.dev/web:3f9c2e1', targets: [{ env: 'staging' }, 'static'] },
      price: '$5.00',
      note: 'see $steps.1.imageTag',
      n: 7,
      flag: false,
      nothing: null,
    });
  });

  it('does not change its input', () => {
    const args = { a: ['$steps.1.imageTag'], b: { c: '$input.service' } };
    const copy = structuredClone(args);
    resolve(args);
    expect(args).toEqual(copy);
  });

  it('refuses a step that has no result', () => {
    expect(badReference('$steps.4.imageTag').message).toMatch(/step 4 has no result/);
    expect(badReference({ deep: ['$steps.0'] }).code).toBe('bad_reference');
  });

  it('refuses a missing field, naming it', () => {
    expect(badReference('$steps.1.imageTAG').message).toMatch(/no field "imageTAG"/);
    expect(badReference('$steps.1.digest.hex.more').message).toMatch(/no field "more"/);
    expect(badReference('$steps.2.urls.5').message).toMatch(/no field "5"/);
    expect(badReference('$steps.3.length').retryable).toBe(false);
    expect(badReference('$input.env.zone').message).toMatch(/no field "zone"/);
  });

  it('refuses names inherited from Object.prototype: they are not fields of the JSON', () => {
    expect(badReference('$input.constructor').message).toMatch(/no field "constructor"/);
    expect(badReference('$steps.1.toString').message).toMatch(/no field "toString"/);
    expect(badReference('$input.__proto__').message).toMatch(/no field "__proto__"/);
  });

  it('refuses $input when the run has none', () => {
    expect(() => resolveReferences('$input.x', { results: new Map(), input: undefined })).toThrow(
      /the run has no input/,
    );
  });
});

describe('planReferenceIssues', () => {
  const step = (args: ScriptedStep['args']): ScriptedStep => ({ tool: 'http.request', args });

  it('accepts references to earlier steps and to the input', () => {
    const plan = [
      step({ url: '$input.url' }),
      step({ from: '$steps.1.body' }),
      step({ both: ['$steps.1', { x: '$steps.2.id' }] }),
    ];
    expect(planReferenceIssues(plan)).toEqual([]);
  });

  it('flags forward references, self references and step 0, with the path of the step', () => {
    const plan = [
      step({ early: '$steps.2.id' }),
      step({ self: { deep: ['$steps.2'] } }),
      step({ zero: '$steps.0.x' }),
    ];
    expect(planReferenceIssues(plan)).toEqual([
      'agent.steps.0.args: $steps.2.id must reference an earlier step (1..0)',
      'agent.steps.1.args: $steps.2 must reference an earlier step (1..1)',
      'agent.steps.2.args: $steps.0.x must reference an earlier step (1..2)',
    ]);
  });

  it('flags every bad reference of a step', () => {
    expect(planReferenceIssues([step({ a: '$steps.5', b: ['$steps.9.x'] })])).toHaveLength(2);
  });
});
