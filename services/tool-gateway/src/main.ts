import { sql } from 'drizzle-orm';
import { openDatabase } from '@dura/db';
import {
  connectNats,
  loadNatsSecurity,
  createLogger,
  runMain,
  startServiceTelemetry,
  waitUntilReachable,
} from '@dura/service-kit';
import { attachMcpServers, parseMcpServers } from '@dura/mcp';
import { loadServiceTools } from '@dura/tools';
import { loadGatewayConfig } from './config';
import { buildGateway } from './service';
import { migrateGateway } from './migrations';

runMain('tool-gateway', async () => {
  const config = loadGatewayConfig();
  const natsSecurity = loadNatsSecurity('tool-gateway', config);
  // Tools and the secrets key before any connection: a bad key stops the process at once, with exit code 2.
  const { tools, secrets } = await loadServiceTools('tool-gateway', config);
  const log = createLogger({ service: 'tool-gateway', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  // The MCP servers' tools join the registry (and follow their servers' tools/list_changed).
  const mcp = await attachMcpServers(parseMcpServers(config.DURA_MCP_SERVERS), tools, log);
  // First, so every instrument the gateway declares is registered with it.
  const telemetry = await startServiceTelemetry({
    service: 'tool-gateway',
    log,
    metricsPort: config.METRICS_PORT,
    metricsHost: config.DURA_BIND_HOST,
  });
  // Waits (not ready) while Postgres or NATS is unreachable; bad credentials still stop the start.
  const waitForServer = { log, onWaiting: telemetry.waiting };
  const database = await waitUntilReachable(
    'Postgres',
    () => openDatabase({ url: config.DATABASE_URL }),
    waitForServer,
  );
  await migrateGateway(database);
  const nats = await connectNats(config.NATS_URL, 'dura-tool-gateway', log, natsSecurity, { waitForServer });
  const gateway = buildGateway({
    config,
    nats,
    db: database.db,
    tools,
    secrets,
    log,
    refreshTools: (tool) => mcp.refreshFor(tool),
    startWait: waitForServer,
  });
  await gateway.start();
  // Ready: started (consumers bound, migrations applied), connected to NATS, and Postgres answers.
  telemetry.ready(async () => {
    if (nats.nc.isClosed()) return 'the NATS connection is closed';
    await database.db.execute(sql`select 1`);
    return undefined;
  });
  return {
    graceMs: config.SHUTDOWN_GRACE_MS,
    async stop(drain) {
      // Drains the calls, then flushes the outbox; the telemetry goes last, so it exports the drain too.
      await gateway.stop(drain);
      await nats.nc.drain();
      await database.close();
      await mcp.close();
      await telemetry.stop();
    },
  };
});
