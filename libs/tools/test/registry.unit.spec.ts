import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { buildImageTool, builtinRegistry, defineTool, ToolRegistry } from '../src/index';

describe('ToolRegistry', () => {
  const registry = builtinRegistry();

  it('lists the built-in tools (http.request is opt-in, not among them)', () => {
    expect(registry.names()).toEqual([
      'demo.build',
      'demo.deploy',
      'demo.fail',
      'demo.notify',
      'demo.test',
      'echo',
    ]);
  });

  it('explains unknown tools and invalid arguments', () => {
    expect(registry.argumentIssues('nope', {})[0]).toMatch(/unknown tool "nope"; known tools: demo\.build/);
    expect(registry.argumentIssues('demo.deploy', { imageTag: 'x', environment: 'mars' })[0]).toMatch(
      /^demo\.deploy args environment:/,
    );
    expect(registry.argumentIssues('demo.build', { service: 'a', commit: '1234567' })).toEqual([]);
  });

  it('checks a result against the output a tool declares, and has nothing to check for one that declares none', () => {
    const quoted = defineTool({
      name: 'shop.quote',
      description: 'a price',
      input: z.object({}),
      output: z.object({ price: z.number().nonnegative() }),
      safety: 'read_only',
      execute: () => Promise.resolve({ price: 1 }),
    });
    const tools = new ToolRegistry([
      quoted,
      ...builtinRegistry()
        .names()
        .map((n) => registry.get(n)!),
    ]);
    expect(tools.resultIssues('shop.quote', { price: 3 })).toEqual([]);
    expect(tools.resultIssues('shop.quote', { price: -1 })).toEqual([
      'shop.quote result price: Too small: expected number to be >=0',
    ]);
    expect(tools.resultIssues('echo', 'anything')).toEqual([]);
    expect(tools.resultIssues('nope', 1)[0]).toMatch(/^unknown tool "nope"/);
  });

  it('replaces a group of tools at run time, and keeps the old group when the new one is refused', () => {
    const tool = (name: string) =>
      defineTool({
        name,
        description: '',
        input: z.object({}),
        safety: 'idempotent',
        execute: () => Promise.resolve(null),
      });
    const live = new ToolRegistry([tool('echo.x'), tool('mcp.a.one'), tool('mcp.a.two'), tool('mcp.b.one')]);
    // Who announces the tools hears of each change that took effect (and of none that was refused).
    const seen: string[][] = [];
    const stop = live.onChange(() => seen.push(live.names()));
    live.replaceGroup('mcp.a.', [tool('mcp.a.three')]);
    expect(live.names()).toEqual(['echo.x', 'mcp.a.three', 'mcp.b.one']);
    expect(seen).toEqual([['echo.x', 'mcp.a.three', 'mcp.b.one']]);
    expect(() => live.replaceGroup('mcp.a.', [tool('mcp.b.two')])).toThrow(/outside the group "mcp\.a\."/);
    expect(() => live.replaceGroup('mcp.a.', [tool('mcp.a.four'), tool('mcp.a.four')])).toThrow(
      /registered twice/,
    );
    expect(live.names()).toEqual(['echo.x', 'mcp.a.three', 'mcp.b.one']);
    expect(seen).toHaveLength(1);
    stop();
    live.replaceGroup('mcp.a.', []);
    expect(seen).toHaveLength(1);
  });

  it('refuses two tools with the same name', () => {
    const tool = defineTool({
      name: 'x.y',
      description: '',
      input: z.object({}),
      safety: 'idempotent',
      execute: () => Promise.resolve(null),
    });
    expect(() => new ToolRegistry([tool, tool])).toThrow(/registered twice/);
  });

  it('demo tools are deterministic in their arguments', async () => {
    const ctx = {
      idempotencyKey: 'k',
      runId: 'r',
      callId: 'c',
      attempt: 1,
      signal: new AbortController().signal,
    };
    const a = await buildImageTool.execute({ service: 'checkout', commit: '9f2c1e7a4b' }, ctx);
    const b = await buildImageTool.execute({ service: 'checkout', commit: '9f2c1e7a4b' }, ctx);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ imageTag: 'checkout:9f2c1e7' });
  });
});
