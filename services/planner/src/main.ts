import { runService } from '@dura/service-kit';
import { prepareServiceTools } from '@dura/mcp';
import { loadAgents } from '@dura/agents';
import { loadPlannerConfig } from './config';
import { buildPlanner } from './service';

runService({
  name: 'planner',
  config: () => loadPlannerConfig(),
  needs: ['nats'],
  async prepare({ config, log, defer }) {
    // Agent definitions that do not load stop the process at once, with exit code 2, before waiting for NATS.
    const agents = await loadAgents(config.DURA_AGENTS);
    // So does a bad secrets key. The MCP servers' tools join the registry: plans are checked against them
    // and models are shown them.
    const { tools, secrets } = await prepareServiceTools('planner', config, log, defer);
    return { tools, secrets, agents };
  },
  async build({ config, log, nats, startWait, prepared }) {
    const planner = await buildPlanner({ config, nats, log, startWait, ...prepared });
    await planner.start();
    return { stop: (drain) => planner.stop(drain) };
  },
});
