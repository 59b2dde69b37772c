import type { ToolDefinition, ToolRegistry } from '@dura/tools';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServers } from './config';
import { McpServerConnection, type McpLog } from './server-connection';
import { mcpToolDefinition } from './tool-definition';
import { mcpToolGroup } from './tool-names';

/** The MCP servers of a deployment, their tools kept in a tool registry. */
export interface McpToolSource {
  /** Lists every server's tools again and updates the registry (a server that fails keeps its old tools). */
  refresh(): Promise<void>;
  /** Lists again the tools of the server `tool` (`mcp.<server>.<name>`) belongs to; other names: nothing. */
  refreshFor(tool: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects to each configured server, lists its tools into `registry` as `mcp.<server>.<tool>`, and keeps
 * them current: a `tools/list_changed` notification lists them again. A server that cannot be reached at
 * start is logged and tried again every `retryMs`; its tools appear once it answers.
 */
export async function attachMcpServers(
  servers: McpServers,
  registry: ToolRegistry,
  log: McpLog,
  options: { retryMs?: number } = {},
): Promise<McpToolSource> {
  const retryMs = options.retryMs ?? 5_000;
  const timers = new Set<NodeJS.Timeout>();
  const connections = Object.entries(servers).map(([name, config]) => {
    const connection: McpServerConnection = new McpServerConnection(name, config, log, (tools) =>
      install(connection, tools),
    );
    return connection;
  });

  function install(connection: McpServerConnection, tools: Tool[]): void {
    const definitions: ToolDefinition[] = [];
    const seen = new Map<string, string>();
    for (const tool of tools) {
      if (connection.config.tools?.[tool.name]?.hidden === true) continue;
      const definition = mcpToolDefinition(connection, tool, connection.config);
      const clash = seen.get(definition.name);
      if (clash !== undefined) {
        log.warn('two tools of an MCP server map to one Dura name; the second is left out (rename one)', {
          server: connection.name,
          tools: [clash, tool.name],
          name: definition.name,
        });
        continue;
      }
      seen.set(definition.name, tool.name);
      definitions.push(definition);
    }
    registry.replaceGroup(mcpToolGroup(connection.name), definitions);
    log.info('MCP server tools listed', {
      server: connection.name,
      tools: definitions.map((d) => `${d.name} (${d.safety})`),
    });
  }

  async function load(connection: McpServerConnection, fresh: boolean): Promise<boolean> {
    try {
      install(connection, fresh ? await connection.refresh() : await connection.tools());
      return true;
    } catch (err) {
      log.warn('cannot list the tools of an MCP server; trying again', {
        server: connection.name,
        retryMs,
        err: (err as Error).message,
      });
      return false;
    }
  }

  function retry(connection: McpServerConnection): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      void load(connection, true).then((ok) => {
        if (!ok) retry(connection);
      });
    }, retryMs);
    timers.add(timer);
  }

  for (const connection of connections) if (!(await load(connection, false))) retry(connection);

  return {
    async refresh() {
      await Promise.all(connections.map((connection) => load(connection, true)));
    },
    async refreshFor(tool) {
      const connection = connections.find((c) => tool.startsWith(mcpToolGroup(c.name)));
      if (connection) await load(connection, true);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await Promise.all(connections.map((connection) => connection.close()));
    },
  };
}
