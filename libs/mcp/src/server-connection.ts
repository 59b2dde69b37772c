import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { resolveSecretValue, type McpServerConfig } from './config';
import type { McpCallResult } from './results';

/** What the library logs through (the services pass their logger). */
export interface McpLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface McpCallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** Sent as `_meta` of the request (the idempotency key, so the server can deduplicate). */
  meta: Record<string, string>;
}

/** The `_meta` key under which every call carries its Dura idempotency key. */
export const IDEMPOTENCY_META_KEY = 'dura/idempotencyKey';

/** A call that never got an answer because the connection to the server closed under it. */
export class McpConnectionLost extends Error {
  override readonly name = 'McpConnectionLost';
}

/**
 * One configured MCP server: connected on first use and again after the connection closed (a stdio server
 * that died is started again), its tool list cached until the server says it changed.
 */
export class McpServerConnection {
  #client: Promise<Client> | undefined;
  #tools: Tool[] | undefined;
  #live: Client | undefined;
  #closed = false;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly log: McpLog,
    /** Called with the fresh list after the server announced `notifications/tools/list_changed`. */
    private readonly onToolsChanged: (tools: Tool[]) => void,
  ) {}

  /** The server's tools, from the cache when listed before. */
  async tools(): Promise<Tool[]> {
    if (this.#tools) return this.#tools;
    return this.refresh();
  }

  /** Lists the server's tools again (every page) and replaces the cache. */
  async refresh(): Promise<Tool[]> {
    const client = await this.client();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.#tools = tools;
    return tools;
  }

  /** Calls `tool`; aborting `signal` sends the server `notifications/cancelled` for the request. */
  async call(tool: string, args: Record<string, unknown>, options: McpCallOptions): Promise<McpCallResult> {
    const client = await this.client();
    try {
      return (await client.callTool(
        { name: tool, arguments: args, _meta: options.meta },
        CallToolResultSchema,
        {
          signal: options.signal,
          // The gateway enforces the tool's timeout through `signal`; the SDK's own only backs it up.
          timeout: options.timeoutMs + 5_000,
          resetTimeoutOnProgress: true,
        },
      )) as McpCallResult;
    } catch (err) {
      if (err instanceof McpError && err.code === Number(ErrorCode.ConnectionClosed))
        throw new McpConnectionLost(`the connection to MCP server ${this.name} closed during the call`, {
          cause: err,
        });
      // The server forgot the session (it restarted): connect again on the next call.
      if (err instanceof StreamableHTTPError && err.code === 404) this.drop(client);
      throw err;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await (await client?.catch(() => undefined))?.close();
  }

  /** Forgets `client` if it is still the current one; the next call connects again. */
  private drop(client: Client): void {
    if (this.#live !== client) return;
    this.#live = undefined;
    this.#client = undefined;
    void client.close().catch(() => undefined);
  }

  private client(): Promise<Client> {
    if (this.#closed) return Promise.reject(new Error(`MCP server ${this.name} was closed`));
    this.#client ??= this.connect().catch((err: unknown) => {
      this.#client = undefined;
      throw new Error(`cannot connect to MCP server ${this.name}: ${(err as Error).message}`, { cause: err });
    });
    return this.#client;
  }

  private async connect(): Promise<Client> {
    const client = new Client({ name: 'dura', version: '0.1.0' });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.refresh().then(this.onToolsChanged, (err: unknown) =>
        this.log.warn('refreshing the tools of an MCP server failed; the old list stays', {
          server: this.name,
          err,
        }),
      );
    });
    client.onclose = () => {
      // The next call connects again (and starts a stdio server again).
      if (this.#live === client) {
        this.#live = undefined;
        this.#client = undefined;
      }
      if (!this.#closed) this.log.warn('the connection to an MCP server closed', { server: this.name });
    };
    await client.connect(this.transport());
    this.#live = client;
    this.log.info('connected to MCP server', { server: this.name, transport: this.config.transport });
    return client;
  }

  private transport(): Transport {
    const config = this.config;
    if (config.transport === 'stdio') {
      const env = Object.fromEntries(
        Object.entries(config.env ?? {}).map(([key, value]) => [
          key,
          resolveSecretValue(value, `server ${this.name} env ${key}`),
        ]),
      );
      return new StdioClientTransport({
        command: config.command,
        args: config.args ?? [],
        env: { ...getDefaultEnvironment(), ...env },
        stderr: 'inherit',
        ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      });
    }
    const headers = Object.fromEntries(
      Object.entries(config.headers ?? {}).map(([key, value]) => [
        key,
        resolveSecretValue(value, `server ${this.name} header ${key}`),
      ]),
    );
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } });
  }
}
