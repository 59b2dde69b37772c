import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { formOf, initialDraft, inputOf, setDraft, type FormField } from '../src/model/schema-form';

/** The form of a zod schema as the catalogue carries it (the planner writes `z.toJSONSchema`, input side). */
const formFor = (schema: z.ZodType) =>
  formOf(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));

const order = z.object({
  customer: z.string().min(2).describe('Who pays'),
  quantity: z.number().int().positive(),
  express: z.boolean().default(false),
  currency: z.enum(['EUR', 'USD']).default('EUR'),
  note: z.string().optional(),
  address: z.object({ city: z.string(), zip: z.string().regex(/^\d{5}$/) }),
  lines: z.array(z.object({ sku: z.string() })).optional(),
});

describe('a form from an agent input schema', () => {
  it('has a field per property: strings, numbers, booleans, enums, nested objects; JSON for the rest', () => {
    const form = formFor(order);
    expect(form.kind).toBe('object');
    const fields = (form as Extract<FormField, { kind: 'object' }>).fields;
    const summary = fields.map((f) => [f.path, f.kind, f.required]);
    expect(summary).toEqual([
      ['customer', 'string', true],
      ['quantity', 'number', true],
      ['express', 'boolean', false],
      ['currency', 'enum', false],
      ['note', 'string', false],
      ['address', 'object', true],
      ['lines', 'json', false],
    ]);
    expect(fields[0]).toMatchObject({ description: 'Who pays', minLength: 2 });
    expect(fields[1]).toMatchObject({ integer: true, exclusiveMinimum: 0 });
    expect(fields[3]).toMatchObject({ options: ['EUR', 'USD'], default: 'EUR' });
    const address = fields[5] as Extract<FormField, { kind: 'object' }>;
    expect(address.fields.map((f) => f.path)).toEqual(['address.city', 'address.zip']);
  });

  it('turns a filled-in draft into the input the schema accepts, leaving out empty optional fields', () => {
    const form = formFor(order);
    let draft = initialDraft(form);
    for (const [path, value] of [
      ['customer', 'Ada'],
      ['quantity', '3'],
      ['express', true],
      ['address.city', 'Lyon'],
      ['address.zip', '69001'],
    ] as const)
      draft = setDraft(draft, path, value);
    const { input, errors } = inputOf(form, draft);
    expect(errors).toEqual({});
    expect(input).toEqual({
      customer: 'Ada',
      quantity: 3,
      express: true,
      currency: 'EUR',
      address: { city: 'Lyon', zip: '69001' },
    });
    expect(order.safeParse(input).success).toBe(true);
  });

  it('names what is wrong with each field by its path', () => {
    const form = formFor(order);
    let draft = initialDraft(form);
    draft = setDraft(draft, 'customer', 'A');
    draft = setDraft(draft, 'quantity', '2.5');
    draft = setDraft(draft, 'address.zip', 'abc');
    draft = setDraft(draft, 'lines', '[{"sku": ');
    const { input, errors } = inputOf(form, draft);
    expect(errors).toEqual({
      customer: 'at least 2 characters',
      quantity: 'must be a whole number',
      'address.city': 'required',
      'address.zip': 'must match ^\\d{5}$',
      lines: expect.stringMatching(/^not valid JSON/),
    });
    expect(input).toBeDefined();
    expect(inputOf(form, setDraft(draft, 'quantity', '0')).errors['quantity']).toBe('more than 0');
    expect(inputOf(form, setDraft(draft, 'quantity', 'many')).errors['quantity']).toBe('not a number');
  });

  it('takes a raw JSON input when the agent declares no schema, and a plain value at the root', () => {
    const raw = formOf(undefined);
    expect(raw).toMatchObject({ kind: 'json', path: '', required: true });
    expect(inputOf(raw, '{"any": [1, 2]}')).toEqual({ input: { any: [1, 2] }, errors: {} });
    expect(inputOf(raw, '')).toEqual({ errors: { '': 'required' } });
    const text = formFor(z.string());
    expect(text.kind).toBe('string');
    expect(inputOf(text, 'hello')).toEqual({ input: 'hello', errors: {} });
    const nullable = formFor(z.object({ n: z.number().nullable() }));
    expect((nullable as Extract<FormField, { kind: 'object' }>).fields[0]).toMatchObject({
      kind: 'number',
      nullable: true,
    });
    expect(inputOf(nullable, { n: '' })).toEqual({ input: { n: null }, errors: {} });
  });

  it('keeps an enum of numbers or booleans as those values, not their text', () => {
    const form = formFor(z.object({ level: z.union([z.literal(1), z.literal(2)]), on: z.literal(true) }));
    const fields = (form as Extract<FormField, { kind: 'object' }>).fields;
    expect(fields.map((f) => f.kind)).toEqual(['json', 'enum']);
    const draft = setDraft(setDraft(initialDraft(form), 'level', '2'), 'on', '0');
    expect(inputOf(form, draft)).toEqual({ input: { level: 2, on: true }, errors: {} });
  });
});
