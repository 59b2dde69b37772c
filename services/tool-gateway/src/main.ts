import { runService } from '@dura/service-kit';
import { attachMcpServers, parseMcpServers } from '@dura/mcp';
import { loadServiceTools } from '@dura/tools';
import { loadGatewayConfig } from './config';
import { buildGateway } from './service';
import { migrateGateway } from './migrations';

runService({
  name: 'tool-gateway',
  config: () => loadGatewayConfig(),
  needs: ['postgres', 'nats'],
  migrate: (database) => migrateGateway(database),
  async prepare({ config, log, defer }) {
    // Tools and the secrets key before any connection: a bad key stops the process at once, with exit code 2.
    const { tools, secrets } = await loadServiceTools('tool-gateway', config);
    // The MCP servers' tools join the registry (and follow their servers' tools/list_changed).
    const mcp = await attachMcpServers(parseMcpServers(config.DURA_MCP_SERVERS), tools, log);
    defer(() => mcp.close());
    return { tools, secrets, mcp };
  },
  async build({ config, log, nats, database, startWait, prepared: { tools, secrets, mcp } }) {
    const gateway = buildGateway({
      config,
      nats,
      db: database.db,
      tools,
      secrets,
      log,
      refreshTools: (tool) => mcp.refreshFor(tool),
      startWait,
    });
    await gateway.start();
    // Drains the calls, then flushes the outbox; runService closes the connections and telemetry after it.
    return { stop: (drain) => gateway.stop(drain) };
  },
});
