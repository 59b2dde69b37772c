import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ToolRegistry, builtinRegistry, defineTool } from '@dura/tools';
import { CONTROL_TOOL_SCHEMAS, controlToolSpecs, isControlTool, toolSpecsFor } from '../src/llm/index';

describe('tool specs for models', () => {
  const registry = builtinRegistry();

  it('describes every registered tool with its JSON Schema, without $schema', () => {
    const specs = toolSpecsFor(registry);
    expect(specs.map((spec) => spec.name)).toEqual(registry.names());
    expect(specs.find((spec) => spec.name === 'demo.deploy')).toEqual({
      name: 'demo.deploy',
      description: 'Deploy an image to an environment.',
      parameters: {
        type: 'object',
        properties: {
          imageTag: { type: 'string', minLength: 1 },
          environment: { type: 'string', enum: ['staging', 'production'] },
        },
        required: ['imageTag', 'environment'],
      },
    });
    for (const spec of specs) expect(spec.parameters).not.toHaveProperty('$schema');
  });

  it('describes only the allowed tools, in the order given, skipping control tools', () => {
    const specs = toolSpecsFor(registry, ['demo.notify', 'dura.sleep', 'demo.build', 'demo.notify']);
    expect(specs.map((spec) => spec.name)).toEqual(['demo.notify', 'demo.build']);
  });

  it('refuses an allowed tool the deployment does not offer, naming the ones it does', () => {
    expect(() => toolSpecsFor(registry, ['pay.charge'])).toThrow(
      /allows tool "pay.charge", which this deployment does not offer; known tools: demo.build, /,
    );
  });

  it('describes a tool input as the model writes it (defaults optional)', () => {
    const spec = toolSpecsFor(registry, ['demo.fail'])[0]!;
    expect(spec.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(spec.parameters).not.toHaveProperty('required');
  });

  it('shows a tool that brought its own JSON Schema (an MCP server’s) with that schema, without $schema', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { orderId: { type: 'string', description: 'The order.' } },
      required: ['orderId'],
    };
    const registry = new ToolRegistry([
      defineTool({
        name: 'mcp.orders.lookup_order',
        description: 'Looks an order up.',
        input: z.looseObject({}),
        inputJsonSchema: schema,
        safety: 'idempotent',
        execute: () => Promise.resolve(null),
      }),
    ]);
    const [spec] = toolSpecsFor(registry);
    expect(spec?.parameters).toEqual({
      type: 'object',
      properties: { orderId: { type: 'string', description: 'The order.' } },
      required: ['orderId'],
    });
    expect(schema.$schema, 'the tool keeps its own schema').toBeDefined();
  });

  it('refuses a tool whose input is not an object schema', () => {
    const odd = defineTool({
      name: 'odd.tool',
      description: 'Takes a bare string.',
      input: z.string(),
      safety: 'idempotent',
      execute: () => Promise.resolve(null),
    });
    expect(() => toolSpecsFor(new ToolRegistry([odd]))).toThrow(
      /tool "odd.tool" has an input schema that is not an object/,
    );
  });
});

describe('control tools', () => {
  it('are described for models, with compact schemas', () => {
    const specs = controlToolSpecs();
    expect(specs.map((spec) => spec.name)).toEqual(['dura.sleep', 'dura.wait_for_signal', 'dura.run_agent']);
    const sleep = specs[0]!;
    expect(sleep.parameters).toMatchObject({
      type: 'object',
      properties: {
        seconds: { type: 'number', exclusiveMinimum: 0 },
        until: { type: 'string', format: 'date-time' },
      },
    });
    // The format says what the generated date-time regex says; the regex would cost tokens on every call.
    expect(JSON.stringify(sleep.parameters)).not.toContain('pattern');
    expect(specs[1]!.parameters).toMatchObject({ required: ['name'] });
    expect(specs[2]!.parameters).toMatchObject({ required: ['agent'], properties: { input: {} } });
    for (const spec of specs) expect(spec.description.length).toBeGreaterThan(20);
  });

  it('validate their arguments with the exported schemas', () => {
    const sleep = CONTROL_TOOL_SCHEMAS['dura.sleep'];
    expect(sleep.safeParse({ seconds: 30 }).success).toBe(true);
    expect(sleep.safeParse({ until: '2030-01-01T09:00:00Z' }).success).toBe(true);
    expect(sleep.safeParse({}).success).toBe(false);
    expect(sleep.safeParse({ seconds: 1, until: '2030-01-01T09:00:00Z' }).success).toBe(false);
    expect(sleep.safeParse({ until: 'tomorrow' }).success).toBe(false);

    const wait = CONTROL_TOOL_SCHEMAS['dura.wait_for_signal'];
    expect(wait.safeParse({ name: 'approve', timeoutSeconds: 3600 }).success).toBe(true);
    expect(wait.safeParse({ name: '' }).success).toBe(false);

    const child = CONTROL_TOOL_SCHEMAS['dura.run_agent'];
    expect(child.parse({ agent: 'triage', input: { ticket: 42 } })).toEqual({
      agent: 'triage',
      input: { ticket: 42 },
    });
    expect(child.safeParse({ agent: 'Triage Bot' }).success).toBe(false);
  });

  it('are told apart from gateway tools by name', () => {
    expect(isControlTool('dura.sleep')).toBe(true);
    expect(isControlTool('dura.run_agent')).toBe(true);
    expect(isControlTool('demo.build')).toBe(false);
    expect(isControlTool('toString')).toBe(false);
  });
});
