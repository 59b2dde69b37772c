import {
  connectNats,
  loadNatsSecurity,
  createLogger,
  runMain,
  startServiceTelemetry,
} from '@dura/service-kit';
import { attachMcpServers, parseMcpServers } from '@dura/mcp';
import { loadAgents } from '@dura/agents';
import { loadServiceTools } from '@dura/tools';
import { loadPlannerConfig } from './config';
import { buildPlanner } from './service';

runMain('planner', async () => {
  const config = loadPlannerConfig();
  const natsSecurity = loadNatsSecurity('planner', config);
  // Tools and the secrets key before any connection: a bad key stops the process at once, with exit code 2.
  const { tools, secrets } = await loadServiceTools('planner', config);
  // So are agent definitions that do not load (exit code 2, before waiting for NATS).
  const agents = await loadAgents(config.DURA_AGENTS);
  const log = createLogger({ service: 'planner', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  // The MCP servers' tools join the registry: plans are checked against them and models are shown them.
  const mcp = await attachMcpServers(parseMcpServers(config.DURA_MCP_SERVERS), tools, log);
  // First, so every instrument the planner declares is registered with it.
  const telemetry = await startServiceTelemetry({
    service: 'planner',
    log,
    metricsPort: config.METRICS_PORT,
    metricsHost: config.DURA_BIND_HOST,
  });
  // Waits (not ready) while NATS is unreachable; bad credentials still stop the start.
  const waitForServer = { log, onWaiting: telemetry.waiting };
  const nats = await connectNats(config.NATS_URL, 'dura-planner', log, natsSecurity, { waitForServer });
  const planner = await buildPlanner({ config, nats, tools, secrets, log, agents, startWait: waitForServer });
  await planner.start();
  // Ready: started (streams, buckets and consumers bound) and still connected to NATS.
  telemetry.ready(() => Promise.resolve(nats.nc.isClosed() ? 'the NATS connection is closed' : undefined));
  return {
    graceMs: config.SHUTDOWN_GRACE_MS,
    async stop(drain) {
      await planner.stop(drain);
      await nats.nc.drain();
      await mcp.close();
      await telemetry.stop();
    },
  };
});
