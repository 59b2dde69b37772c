// An MCP server built with the official SDK, for docs/mcp.md: an order desk with one tool per safety class.
// Run it over stdio (`npx tsx examples/mcp/orders-server.ts`); Dura starts it itself from DURA_MCP_SERVERS.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const orders = new Map([['o-1001', { status: 'delivered', total: 120, tags: new Set<string>() }]]);
/** Refunds already made, by the idempotency key Dura sends in `_meta`: a retry never pays twice. */
const refunds = new Map<string, string>();

const server = new McpServer({ name: 'orders', version: '1.0.0' });

server.registerTool(
  'lookupOrder',
  {
    description: 'Looks an order up by id.',
    inputSchema: { orderId: z.string() },
    outputSchema: { orderId: z.string(), status: z.string(), total: z.number() },
    annotations: { readOnlyHint: true },
  },
  ({ orderId }) => {
    const order = orders.get(orderId);
    if (!order) return { isError: true, content: [{ type: 'text', text: `no order ${orderId}` }] };
    const structuredContent = { orderId, status: order.status, total: order.total };
    return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
  },
);

server.registerTool(
  'tagOrder',
  {
    description: 'Adds a tag to an order; tagging twice changes nothing.',
    inputSchema: { orderId: z.string(), tag: z.string() },
    annotations: { idempotentHint: true, destructiveHint: false },
  },
  ({ orderId, tag }) => {
    orders.get(orderId)?.tags.add(tag);
    return { content: [{ type: 'text', text: `tagged ${orderId} ${tag}` }] };
  },
);

server.registerTool(
  'refundOrder',
  {
    description: 'Refunds an order to the card it was paid with.',
    inputSchema: { orderId: z.string(), amount: z.number().positive() },
    annotations: { destructiveHint: true },
  },
  ({ orderId, amount }, extra) => {
    const key = String(extra._meta?.['dura/idempotencyKey'] ?? `${orderId}:${amount}`);
    const id = refunds.get(key) ?? `rf-${refunds.size + 1}`;
    refunds.set(key, id);
    return { content: [{ type: 'text', text: `refund ${id}: ${amount} to order ${orderId}` }] };
  },
);

await server.connect(new StdioServerTransport());
