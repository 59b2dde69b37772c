import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { IDEMPOTENCY_META_KEY } from '../server-connection';

/** One call a witness server received. */
export interface WitnessCall {
  tool: string;
  key: string | undefined;
  args: Record<string, unknown>;
}

/** What the witness servers of one test share: every call they received, and the tools added at run time. */
export class WitnessState {
  readonly calls: WitnessCall[] = [];
  readonly added: string[] = [];
  /** Calls that were aborted by the client's `notifications/cancelled`. */
  readonly cancelled: WitnessCall[] = [];

  /** Calls of `tool` (its server name), with idempotency key `key` when given. */
  count(tool: string, key?: string): number {
    return this.calls.filter((call) => call.tool === tool && (key === undefined || call.key === key)).length;
  }
}

export interface WitnessServerOptions {
  /** Called for the `crash` tool: a stdio server exits here, mid-call. */
  onCrash?: () => void;
  /** Called after every call is recorded (a stdio server writes it down for the test). */
  onCall?: (call: WitnessCall) => void;
}

/** The bytes the `screenshot` tool returns as its image, base64. */
export const SCREENSHOT_PNG = Buffer.from('\x89PNG\r\n\x1a\nwitness-screenshot').toString('base64');

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('cancelled'));
    });
  });

/**
 * An MCP server built with the SDK for tests: `charge` (destructive), `upsert` (idempotent), `lookup`
 * (read-only, with structured content), `fail` (an `isError` result), `crash` (the server dies mid-call),
 * `slow` (waits until cancelled) and `add_tool` (adds `extra_<name>` and announces `tools/list_changed`).
 */
export function createWitnessMcpServer(state: WitnessState, options: WitnessServerOptions = {}): McpServer {
  const server = new McpServer({ name: 'witness', version: '1.0.0' });
  const record = (tool: string, args: Record<string, unknown>, meta: Record<string, unknown> | undefined) => {
    const key = meta?.[IDEMPOTENCY_META_KEY];
    const call = { tool, key: typeof key === 'string' ? key : undefined, args };
    state.calls.push(call);
    options.onCall?.(call);
    return call;
  };
  server.registerTool(
    'charge',
    {
      description: 'Charges a card. Not safe to repeat.',
      inputSchema: { amount: z.number().int().positive(), delayMs: z.number().int().min(0).optional() },
      annotations: { destructiveHint: true },
    },
    async (args, extra) => {
      record('charge', args, extra._meta);
      await sleep(args.delayMs ?? 0, extra.signal);
      return text(`charged ${args.amount}`);
    },
  );
  server.registerTool(
    'upsert',
    {
      description: 'Stores a record under its id; a repeat changes nothing.',
      inputSchema: { id: z.string(), delayMs: z.number().int().min(0).optional() },
      annotations: { idempotentHint: true, destructiveHint: false },
    },
    async (args, extra) => {
      record('upsert', args, extra._meta);
      await sleep(args.delayMs ?? 0, extra.signal);
      return text(`stored ${args.id}`);
    },
  );
  server.registerTool(
    'lookupOrder',
    {
      description: 'Looks an order up.',
      inputSchema: { orderId: z.string() },
      outputSchema: { orderId: z.string(), status: z.string() },
      annotations: { readOnlyHint: true },
    },
    (args, extra) => {
      record('lookupOrder', args, extra._meta);
      const structuredContent = { orderId: args.orderId, status: 'shipped' };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  server.registerTool(
    'screenshot',
    {
      description: 'A picture of the page, and the page as a file.',
      inputSchema: { page: z.string() },
      annotations: { readOnlyHint: true },
    },
    (args, extra) => {
      record('screenshot', args, extra._meta);
      return {
        content: [
          { type: 'image', data: SCREENSHOT_PNG, mimeType: 'image/png' },
          {
            type: 'resource',
            resource: {
              uri: `file:///${args.page}.html`,
              mimeType: 'text/html',
              blob: Buffer.from(`<h1>${args.page}</h1>`).toString('base64'),
            },
          },
        ],
      };
    },
  );
  server.registerTool(
    'fail',
    {
      description: 'Always reports an error.',
      inputSchema: { why: z.string() },
      annotations: { readOnlyHint: true },
    },
    (args, extra) => {
      record('fail', args, extra._meta);
      return { isError: true, content: [{ type: 'text', text: `cannot do that: ${args.why}` }] };
    },
  );
  server.registerTool(
    'crash',
    {
      description: 'The server dies during this call.',
      inputSchema: {},
      annotations: { idempotentHint: true },
    },
    (_args, extra) => {
      record('crash', {}, extra._meta);
      options.onCrash?.();
      return new Promise<CallToolResult>(() => undefined);
    },
  );
  server.registerTool(
    'slow',
    { description: 'Waits until cancelled.', inputSchema: {}, annotations: { readOnlyHint: true } },
    async (_args, extra) => {
      const call = record('slow', {}, extra._meta);
      await sleep(600_000, extra.signal).catch(() => state.cancelled.push(call));
      return text('never');
    },
  );
  server.registerTool(
    'add_tool',
    { description: 'Adds a tool.', inputSchema: { name: z.string().regex(/^[a-z]+$/) } },
    (args, extra) => {
      record('add_tool', args, extra._meta);
      state.added.push(args.name);
      registerExtra(server, state, args.name);
      return text(`added extra_${args.name}`);
    },
  );
  for (const name of state.added) registerExtra(server, state, name);
  return server;
}

/** Registers tool `extra_<name>` on `server` (the SDK announces `tools/list_changed` once connected). */
export function registerExtra(server: McpServer, state: WitnessState, name: string): void {
  server.registerTool(
    `extra_${name}`,
    {
      description: `A tool added at run time (${name}).`,
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    (_args, extra) => {
      const key = extra._meta?.[IDEMPOTENCY_META_KEY];
      state.calls.push({ tool: `extra_${name}`, key: typeof key === 'string' ? key : undefined, args: {} });
      return text(`extra ${name}`);
    },
  );
}
