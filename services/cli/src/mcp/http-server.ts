import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { isLoopbackHost, loopbackRefusal } from '@dura/service-kit';

const MAX_BODY_BYTES = 1_048_576;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  /** SHA-256 of the bearer token that opened the session: every later request must bring the same one. */
  tokenHash: string;
}

export interface DuraMcpHttpServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `dura mcp --http`: the Dura MCP server over Streamable HTTP at `/mcp`. Every request needs
 * `Authorization: Bearer <API token>`; a session is bound to the token that opened it, and its tools call the
 * Dura API with that token, so the API's scopes and tenants apply unchanged.
 */
export async function startDuraMcpHttpServer(options: {
  host: string;
  port: number;
  /** The server for a session: `token` is the caller's, or the anonymous one (undefined: none at all). */
  serverFor: (token: string | undefined) => McpServer;
  /** Serve requests without a token, with this token (a local client that cannot send headers); loopback only. */
  anonymous?: { token: string | undefined };
}): Promise<DuraMcpHttpServer> {
  const sessions = new Map<string, Session>();
  const loopback = isLoopbackHost(options.host);
  if (options.anonymous && !loopback)
    throw new Error(
      `a token for requests without one is only allowed on a loopback address, not ${options.host}`,
    );
  let port = 0;
  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) jsonError(res, 500, -32603, `internal error: ${(err as Error).message}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp')
      return jsonError(res, 404, -32601, 'the MCP endpoint is /mcp');
    // DNS rebinding, or a page of another site: a browser must not reach a loopback server.
    const refused = loopback ? loopbackRefusal(port, req.headers) : undefined;
    if (refused) return jsonError(res, 403, -32000, refused.message);
    const presented = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = presented ?? options.anonymous?.token;
    if (presented === undefined && !options.anonymous) {
      res.setHeader('www-authenticate', 'Bearer realm="dura"');
      return jsonError(res, 401, -32001, 'send "Authorization: Bearer <token>" with a Dura API token');
    }
    const tokenHash = createHash('sha256')
      .update(token ?? '')
      .digest('hex');
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = sessions.get(id);
      if (!session) return jsonError(res, 404, -32001, 'unknown or expired session: initialize again');
      if (session.tokenHash !== tokenHash)
        return jsonError(res, 403, -32001, 'this session was opened with another token');
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body))
      return jsonError(res, 400, -32600, 'no session: send an initialize request first');
    const server = options.serverFor(token);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { transport, server, tokenHash });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/mcp`,
    async close() {
      await Promise.allSettled([...sessions.values()].map(({ server }) => server.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function jsonError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
