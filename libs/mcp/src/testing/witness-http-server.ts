import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createWitnessMcpServer, registerExtra, WitnessState } from './witness-mcp-server';

export interface WitnessHttpServer {
  /** The Streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  state: WitnessState;
  /** Adds tool `extra_<name>` on every open session; each announces `tools/list_changed`. */
  addTool(name: string): void;
  /** Forgets every session, as a restarted server would: their next request is answered 404. */
  forgetSessions(): void;
  /** `tools/list` requests received so far (each client lists again after `tools/list_changed`). */
  lists(): number;
  /** Requests that came without the expected `authorization` header (answered 401). */
  unauthorized(): number;
  close(): Promise<void>;
}

/**
 * The witness MCP server over Streamable HTTP, one SDK server per session, all sharing one `WitnessState`
 * (a gateway killed and started again opens a new session and sees the same counters). With `token`, every
 * request must carry `authorization: Bearer <token>`.
 */
export async function startWitnessHttpServer(options: { token?: string } = {}): Promise<WitnessHttpServer> {
  const state = new WitnessState();
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  let unauthorized = 0;
  let lists = 0;
  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
      unauthorized += 1;
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if ((body as { method?: unknown } | undefined)?.method === 'tools/list') lists += 1;
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) return existing.transport.handleRequest(req, res, body);
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"unknown session"}');
      return;
    }
    const server = createWitnessMcpServer(state);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, server });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    addTool(name) {
      state.added.push(name);
      for (const { server } of sessions.values()) registerExtra(server, state, name);
    },
    unauthorized: () => unauthorized,
    forgetSessions: () => sessions.clear(),
    lists: () => lists,
    async close() {
      await Promise.allSettled([...sessions.values()].map(({ server }) => server.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}
