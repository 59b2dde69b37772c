import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { CatalogueToolSchema } from '@dura/contracts';
import { defineTool, ToolRegistry } from '@dura/tools';
import { toolCatalogue } from '../src/tool-catalogue';

const now = new Date('2026-11-29T01:00:00.000Z');
const charge = defineTool({
  name: 'payments.charge',
  description: 'Charges a card.',
  input: z.object({ amount: z.number().positive() }),
  safety: 'unsafe',
  timeoutMs: 5_000,
  retry: { attempts: 5 },
  concurrency: 2,
  requiresApproval: { timeoutSeconds: 600, onTimeout: 'fail' },
  execute: () => Promise.resolve(null),
});
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a thing up.',
  input: z.object({ q: z.string() }),
  inputJsonSchema: { type: 'object', properties: { q: { type: 'string', title: 'as the MCP server says' } } },
  safety: 'read_only',
  execute: () => Promise.resolve(null),
});

describe('the tools a gateway announces', () => {
  it('with safety class, input schema and the limits the gateway applies', () => {
    const entries = toolCatalogue(new ToolRegistry([charge, lookup]), { maxAttempts: 3 }, now);
    expect(entries.map((e) => e.key)).toEqual(['tool.lookup', 'tool.payments=2Echarge']);
    for (const { value } of entries) expect(CatalogueToolSchema.parse(value)).toEqual(value);
    const [lookupEntry, chargeEntry] = entries.map((e) => e.value);
    expect(chargeEntry).toMatchObject({
      safety: 'unsafe',
      inputSchema: { type: 'object', properties: { amount: { type: 'number', exclusiveMinimum: 0 } } },
      limits: {
        concurrency: 2,
        timeoutMs: 5_000,
        attempts: 5,
        approval: { required: true, timeoutSeconds: 600, onTimeout: 'fail' },
      },
    });
    // Defaults: the gateway's attempts and timeout, no concurrency limit, no approval; an MCP tool's own schema.
    expect(lookupEntry).toMatchObject({
      safety: 'read_only',
      inputSchema: lookup.inputJsonSchema,
      limits: { timeoutMs: 60_000, attempts: 3, approval: { required: false } },
    });
    expect((lookupEntry as { limits: object }).limits).not.toHaveProperty('concurrency');
  });

  it('GATEWAY_TOOL_CONCURRENCY overrides a tool’s own concurrency', () => {
    const [entry] = toolCatalogue(
      new ToolRegistry([charge]),
      { maxAttempts: 3, toolConcurrency: { 'payments.charge': 7 } },
      now,
    );
    expect(entry?.value).toMatchObject({ limits: { concurrency: 7 } });
  });
});
