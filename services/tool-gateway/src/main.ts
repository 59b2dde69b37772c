import { runService } from '@dura/service-kit';
import { prepareServiceTools } from '@dura/mcp';
import { loadGatewayConfig } from './config';
import { buildGateway } from './service';
import { migrateGateway } from './migrations';

runService({
  name: 'tool-gateway',
  config: () => loadGatewayConfig(),
  needs: ['postgres', 'nats'],
  migrate: (database) => migrateGateway(database),
  async prepare({ config, log, defer }) {
    // Tools and the secrets key before any connection (a bad key: exit code 2), the MCP servers' tools with them.
    return prepareServiceTools('tool-gateway', config, log, defer);
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
