import { describe, expect, it } from 'vitest';
import { ConcurrencyKeyTemplateSchema, keyTemplateIssue, resolveKeyTemplate } from '../src/index';

const template = (key: string) => ({ key, limit: 1 });

describe('concurrency key templates', () => {
  it('fills each placeholder from the input: strings as they are, numbers and booleans as their JSON text', () => {
    const input = { customerId: 42, region: 'eu', order: { lines: [{ sku: 'A-1' }] }, vip: true };
    expect(resolveKeyTemplate(template('customer:{{input.customerId}}'), input)).toEqual({
      ok: true,
      key: { key: 'customer:42', limit: 1 },
    });
    expect(
      resolveKeyTemplate(template('{{ input.region }}/{{input.order.lines.0.sku}}/{{input.vip}}'), input),
    ).toMatchObject({ ok: true, key: { key: 'eu/A-1/true' } });
    expect(resolveKeyTemplate(template('tenant-wide'), undefined)).toMatchObject({
      ok: true,
      key: { key: 'tenant-wide' },
    });
    expect(resolveKeyTemplate(template('user:{{input}}'), 'ada')).toMatchObject({ key: { key: 'user:ada' } });
  });

  it('refuses a path the input does not fill, naming it and what it found, rather than a shared key', () => {
    const key = template('customer:{{input.customerId}}');
    expect(resolveKeyTemplate(key, { orderId: 1 })).toEqual({
      ok: false,
      path: 'input.customerId',
      problem: 'is missing',
    });
    expect(resolveKeyTemplate(key, undefined)).toMatchObject({ ok: false, problem: 'is missing' });
    expect(resolveKeyTemplate(key, { customerId: null })).toMatchObject({ problem: 'is null' });
    expect(resolveKeyTemplate(key, { customerId: '' })).toMatchObject({ problem: 'is an empty string' });
    expect(resolveKeyTemplate(key, { customerId: { id: 1 } })).toMatchObject({
      problem: 'is an object, not a string or a number',
    });
    expect(resolveKeyTemplate(key, { customerId: [1] })).toMatchObject({
      problem: 'is a list, not a string or a number',
    });
    expect(resolveKeyTemplate(template('{{input.items.x}}'), { items: ['a'] })).toMatchObject({
      problem: 'is missing',
    });
    // Inherited properties are not fields of the input.
    expect(resolveKeyTemplate(template('{{input.constructor}}'), {})).toMatchObject({
      problem: 'is missing',
    });
    expect(resolveKeyTemplate(template('{{input.a}}'), { a: 'x'.repeat(201) })).toMatchObject({ ok: false });
  });

  it('accepts only paths into the input: nothing is evaluated', () => {
    expect(keyTemplateIssue('customer:{{input.customerId}}')).toBeUndefined();
    expect(keyTemplateIssue('{{input.a.0.b}}')).toBeUndefined();
    expect(keyTemplateIssue('{{process.env.HOME}}')).toMatch(/is not a path into the input/);
    expect(keyTemplateIssue('{{input.a + 1}}')).toMatch(/is not a path into the input/);
    expect(keyTemplateIssue('{{input[0]}}')).toMatch(/is not a path into the input/);
    expect(keyTemplateIssue('customer:{{input.id')).toMatch(/unclosed or stray/);
    expect(ConcurrencyKeyTemplateSchema.safeParse({ key: '{{input..a}}', limit: 1 }).success).toBe(false);
    expect(ConcurrencyKeyTemplateSchema.safeParse({ key: 'k', limit: 0 }).success).toBe(false);
  });
});
