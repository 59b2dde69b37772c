import { runService } from '@dura/service-kit';
import { attachMcpServers, parseMcpServers } from '@dura/mcp';
import { loadAgents } from '@dura/agents';
import { loadServiceTools } from '@dura/tools';
import { loadPlannerConfig } from './config';
import { buildPlanner } from './service';

runService({
  name: 'planner',
  config: () => loadPlannerConfig(),
  needs: ['nats'],
  async prepare({ config, log, defer }) {
    // Tools and the secrets key before any connection: a bad key stops the process at once, with exit code 2.
    const { tools, secrets } = await loadServiceTools('planner', config);
    // So are agent definitions that do not load (exit code 2, before waiting for NATS).
    const agents = await loadAgents(config.DURA_AGENTS);
    // The MCP servers' tools join the registry: plans are checked against them and models are shown them.
    const mcp = await attachMcpServers(parseMcpServers(config.DURA_MCP_SERVERS), tools, log);
    defer(() => mcp.close());
    return { tools, secrets, agents };
  },
  async build({ config, log, nats, startWait, prepared }) {
    const planner = await buildPlanner({ config, nats, log, startWait, ...prepared });
    await planner.start();
    return { stop: (drain) => planner.stop(drain) };
  },
});
