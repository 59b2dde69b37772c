import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ToolNameSchema } from '@dura/contracts';
import { mcpToolName, mcpToolSafety, observationOf, parseMcpServers } from '../src/index';

describe('mcpToolName', () => {
  it.each([
    ['getForecast', 'mcp.weather.get_forecast'],
    ['list-files', 'mcp.weather.list-files'],
    ['files.read', 'mcp.weather.files_read'],
    ['9lives', 'mcp.weather.t_9lives'],
    ['HTTPGet', 'mcp.weather.httpget'],
  ])('%s -> %s, a valid Dura tool name', (tool, name) => {
    expect(mcpToolName('weather', tool)).toBe(name);
    expect(ToolNameSchema.safeParse(name).success).toBe(true);
  });
});

describe('mcpToolSafety', () => {
  it('follows the annotations: read-only and idempotent may repeat, anything else is unsafe', () => {
    expect(mcpToolSafety({ readOnlyHint: true })).toBe('idempotent');
    expect(mcpToolSafety({ idempotentHint: true, destructiveHint: true })).toBe('idempotent');
    expect(mcpToolSafety({ destructiveHint: true })).toBe('unsafe');
    expect(mcpToolSafety({})).toBe('unsafe');
    expect(mcpToolSafety(undefined)).toBe('unsafe');
  });

  it('lets the configuration override them', () => {
    expect(mcpToolSafety({ readOnlyHint: true }, 'unsafe')).toBe('unsafe');
    expect(mcpToolSafety({ destructiveHint: true }, 'idempotent')).toBe('idempotent');
  });
});

describe('observationOf', () => {
  it('keeps every block and the structured content', () => {
    expect(
      observationOf('mcp.x.y', {
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image', data: 'aGk=', mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///a', text: 'body' } },
        ],
        structuredContent: { n: 1 },
      }),
    ).toEqual({
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image', data: 'aGk=', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a', text: 'body' } },
      ],
      structuredContent: { n: 1 },
    });
  });

  it('turns isError into a terminal failure carrying the text', () => {
    expect(() =>
      observationOf('mcp.x.y', { isError: true, content: [{ type: 'text', text: 'no such file' }] }),
    ).toThrow(expect.objectContaining({ code: 'mcp_tool_error', retryable: false }));
  });
});

describe('parseMcpServers', () => {
  it('reads the configuration docs/mcp.md shows, and the example file', () => {
    const docs = readFileSync(new URL('../../../docs/mcp.md', import.meta.url), 'utf8');
    const block = /```json\n(\{\n {2}"orders"[\s\S]*?)```/.exec(docs)?.[1];
    const servers = parseMcpServers(block);
    expect(Object.keys(servers)).toEqual(['orders', 'tickets']);
    expect(servers.orders).toMatchObject({
      transport: 'stdio',
      tools: { refundOrder: { requiresApproval: true } },
    });
    const example = parseMcpServers(
      new URL('../../../examples/mcp/mcp-servers.json', import.meta.url).pathname,
    );
    expect(example.orders).toEqual(servers.orders);
  });

  it('refuses what it cannot use, saying what is wrong', () => {
    expect(() => parseMcpServers('{"Bad Name": {"transport": "stdio", "command": "x"}}')).toThrow(
      /server name/,
    );
    expect(() => parseMcpServers('{"a": {"transport": "http", "url": "ftp://x"}}')).toThrow(
      /DURA_MCP_SERVERS is invalid/,
    );
    expect(() => parseMcpServers('{"a": {"transport": "stdio"}}')).toThrow(/command/);
    expect(() => parseMcpServers('{"a": ')).toThrow(/not valid JSON/);
    expect(() => parseMcpServers('/no/such/file.json')).toThrow(/cannot read/);
    expect(parseMcpServers(undefined)).toEqual({});
  });
});
