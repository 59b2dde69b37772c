// A worker: the planner and the tool gateway in one process, one NATS connection. Calls of the gateway's
// tools run in place inside the planner's drive of their run (no tool task, no decide task per step); the
// log, the effect ledger and the outbox stay what they are, so every guarantee of the separate services
// holds. Configured by the planner's and the gateway's environment variables together (docs/workers.md).
import { loadAgents } from '@dura/agents';
import { prepareServiceTools } from '@dura/mcp';
import { runService } from '@dura/service-kit';
import { migrateGateway } from '@dura/tool-gateway';
import { loadWorkerConfig } from './config';
import { buildWorker } from './service';

runService({
  name: 'worker',
  config: () => loadWorkerConfig(),
  needs: ['postgres', 'nats'],
  migrate: (database) => migrateGateway(database),
  async prepare({ config, log, defer }) {
    // Agent definitions that do not load stop the process at once, with exit code 2, before any connection.
    const agents = await loadAgents(config.DURA_AGENTS);
    // So does a bad secrets key; the MCP servers' tools join the registry.
    return { agents, ...(await prepareServiceTools('worker', config, log, defer)) };
  },
  async build({ config, log, nats, database, startWait, prepared: { tools, secrets, agents, mcp } }) {
    const worker = await buildWorker({
      config,
      nats,
      db: database.db,
      tools,
      secrets,
      agents,
      log,
      refreshTools: (tool) => mcp.refreshFor(tool),
      startWait,
    });
    await worker.start();
    log.info('worker started', { localTools: worker.localTools() });
    return { stop: (drain) => worker.stop(drain) };
  },
});
