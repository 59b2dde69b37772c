import { loadServiceTools, type SecretsBox, type ServiceToolsConfig, type ToolRegistry } from '@dura/tools';
import { parseMcpServers } from './config';
import { attachMcpServers, type McpToolSource } from './mcp-tool-source';
import type { McpLog } from './server-connection';

export interface ServiceToolsWithMcp {
  tools: ToolRegistry;
  secrets: SecretsBox | undefined;
  mcp: McpToolSource;
}

/**
 * A service's tools as its start-up prepares them, before any connection: the registry and the secrets box
 * (a bad key throws, so the process stops with exit code 2), then the tools of `DURA_MCP_SERVERS` joined to
 * the registry and kept current on their servers' `tools/list_changed`. `defer` closes the servers with the
 * service.
 */
export async function prepareServiceTools(
  service: string,
  config: ServiceToolsConfig & { DURA_MCP_SERVERS?: string | undefined },
  log: McpLog,
  defer: (close: () => Promise<void>) => void,
): Promise<ServiceToolsWithMcp> {
  const { tools, secrets } = await loadServiceTools(service, config);
  const mcp = await attachMcpServers(parseMcpServers(config.DURA_MCP_SERVERS), tools, log);
  defer(() => mcp.close());
  return { tools, secrets, mcp };
}
