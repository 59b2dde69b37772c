// A worker: the planner and the tool gateway in one process, one NATS connection. Calls of the gateway's
// tools run in place inside the planner's drive of their run (no tool task, no decide task per step); the
// log, the effect ledger and the outbox stay what they are, so every guarantee of the separate services
// holds. Configured by the planner's and the gateway's environment variables together; scale it like either.
import { sql } from 'drizzle-orm';
import { openDatabase } from '@dura/db';
import { buildPlanner, loadPlannerConfig } from '@dura/planner';
import {
  connectNats,
  createLogger,
  loadNatsSecurity,
  runMain,
  startServiceTelemetry,
  waitUntilReachable,
} from '@dura/service-kit';
import { buildGateway, loadGatewayConfig, migrateGateway } from '@dura/tool-gateway';
import { loadServiceTools } from '@dura/tools';
import { attachMcpServers, parseMcpServers } from '@dura/mcp';
import { loadAgents } from '@dura/agents';

/**
 * A worker's drive holds a run's slot while the run's calls run in place, so it takes more runs at once than
 * a planner does (16) unless PLANNER_CONCURRENCY says otherwise.
 */
export const WORKER_DEFAULT_CONCURRENCY = 64;

runMain('worker', async () => {
  const loaded = loadPlannerConfig();
  const plannerConfig = process.env['PLANNER_CONCURRENCY']
    ? loaded
    : { ...loaded, PLANNER_CONCURRENCY: WORKER_DEFAULT_CONCURRENCY };
  const gatewayConfig = loadGatewayConfig();
  const natsSecurity = loadNatsSecurity('worker', plannerConfig);
  // Tools and the secrets key before any connection: a bad key stops the process at once, with exit code 2.
  const { tools, secrets } = await loadServiceTools('worker', gatewayConfig);
  // So are agent definitions that do not load (exit code 2, before waiting for NATS or Postgres).
  const agents = await loadAgents(plannerConfig.DURA_AGENTS);
  const log = createLogger({
    service: 'worker',
    level: plannerConfig.LOG_LEVEL,
    format: plannerConfig.LOG_FORMAT,
  });
  // The MCP servers' tools join the registry (and follow their servers' tools/list_changed).
  const mcp = await attachMcpServers(parseMcpServers(gatewayConfig.DURA_MCP_SERVERS), tools, log);
  const telemetry = await startServiceTelemetry({
    service: 'worker',
    log,
    metricsPort: plannerConfig.METRICS_PORT,
    metricsHost: plannerConfig.DURA_BIND_HOST,
  });
  const waitForServer = { log, onWaiting: telemetry.waiting };
  const database = await waitUntilReachable(
    'Postgres',
    () => openDatabase({ url: gatewayConfig.DATABASE_URL }),
    waitForServer,
  );
  await migrateGateway(database);
  const nats = await connectNats(plannerConfig.NATS_URL, 'dura-worker', log, natsSecurity, { waitForServer });
  const gateway = buildGateway({
    config: gatewayConfig,
    nats,
    db: database.db,
    tools,
    secrets,
    log: log.child({ service: 'tool-gateway' }),
    refreshTools: (tool) => mcp.refreshFor(tool),
    startWait: waitForServer,
  });
  const planner = await buildPlanner({
    config: plannerConfig,
    nats,
    tools,
    secrets,
    log: log.child({ service: 'planner' }),
    localTools: gateway.local,
    agents,
    startWait: waitForServer,
  });
  await gateway.start();
  await planner.start();
  log.info('worker started', { localTools: tools.names().filter((name) => gateway.local.runs(name)) });
  telemetry.ready(async () => {
    if (nats.nc.isClosed()) return 'the NATS connection is closed';
    await database.db.execute(sql`select 1`);
    return undefined;
  });
  return {
    graceMs: Math.max(plannerConfig.SHUTDOWN_GRACE_MS, gatewayConfig.SHUTDOWN_GRACE_MS),
    async stop(drain) {
      // The planner first: no new drives; then the gateway drains its calls and flushes the outbox.
      await planner.stop(drain);
      await gateway.stop(drain);
      await nats.nc.drain();
      await database.close();
      await mcp.close();
      await telemetry.stop();
    },
  };
});
