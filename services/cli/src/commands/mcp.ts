import { resolveApiToken } from '../api-token';
import { stringFlag } from '../args';
import { EXIT, UsageError, type CommandModule } from '../command';

// The MCP SDK is loaded when the command runs, not when `dura` starts: every other command starts faster.
const loadServer = async () => {
  const [{ StdioServerTransport }, { createDuraApi }, { startDuraMcpHttpServer }, { createDuraMcpServer }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('../mcp/dura-api'),
      import('../mcp/http-server'),
      import('../mcp/run-tools'),
    ]);
  return { StdioServerTransport, createDuraApi, startDuraMcpHttpServer, createDuraMcpServer };
};

const VERSION = '0.1.0';

export const mcp: CommandModule = {
  name: 'mcp',
  usage: 'dura mcp [--http [--port PORT] [--host HOST]]',
  flags: {
    http: { type: 'boolean', description: 'serve Streamable HTTP at /mcp instead of stdio' },
    port: { type: 'string', value: 'PORT', description: 'HTTP port (default 8765; 0: a free port)' },
    host: { type: 'string', value: 'HOST', description: 'HTTP address to bind (default 127.0.0.1)' },
    anonymous: {
      type: 'boolean',
      description: 'with --http on a loopback address: a request without a token uses DURA_API_TOKEN',
    },
  },
  positionals: { min: 0, max: 0 },
  help: `Tools: start_run, get_run, list_runs, wait_run (with progress notifications), approve, reject,
signal, cancel. Resources: dura://runs/{runId} (state) and dura://runs/{runId}/events, which a client may
subscribe to (notified on each new event of the run). Every tool calls the
Dura API (--api / DURA_API_URL): over stdio with the token of DURA_API_TOKEN or DURA_API_TOKEN_FILE; over
HTTP with the bearer token each client sends, so the token's scopes and tenant decide what it may do.
  dura mcp                              # for a local MCP client (command: dura, args: [mcp])
  dura mcp --http --port 8765           # clients send Authorization: Bearer <token>`,
  async run(args, ctx) {
    const http = args.flags.http === true;
    if (!http && (args.flags.port !== undefined || args.flags.host !== undefined || args.flags.anonymous))
      throw new UsageError('--port, --host and --anonymous only apply with --http');
    const { StdioServerTransport, createDuraApi, startDuraMcpHttpServer, createDuraMcpServer } =
      await loadServer();
    if (!http) {
      const token = await resolveApiToken({}, process.env, (text) => ctx.out.error(text));
      const server = createDuraMcpServer(createDuraApi({ apiUrl: ctx.apiUrl, token }), VERSION);
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        transport.onclose = resolve;
      });
      await server.connect(transport);
      ctx.signal.addEventListener('abort', () => void server.close(), { once: true });
      process.stdin.once('end', () => void server.close());
      await closed;
      return EXIT.ok;
    }
    const port = portOf(stringFlag(args, 'port'));
    const host = stringFlag(args, 'host') ?? '127.0.0.1';
    let anonymous: { token: string | undefined } | undefined;
    if (args.flags.anonymous === true) {
      if (!['127.0.0.1', 'localhost', '::1'].includes(host))
        throw new UsageError(
          `--anonymous serves requests without a token: only on a loopback --host, not ${host}`,
        );
      anonymous = { token: await resolveApiToken({}, process.env, (text) => ctx.out.error(text)) };
    }
    const served = await startDuraMcpHttpServer({
      host,
      port,
      ...(anonymous ? { anonymous } : {}),
      serverFor: (token) => createDuraMcpServer(createDuraApi({ apiUrl: ctx.apiUrl, token }), VERSION),
    });
    ctx.out.note(`dura mcp: serving ${served.url} for the API at ${ctx.apiUrl}`);
    ctx.out.line(served.url);
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await served.close();
    return EXIT.ok;
  },
};

function portOf(text: string | undefined): number {
  if (text === undefined) return 8765;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a port number (0 to 65535), got "${text}"`);
  return port;
}
