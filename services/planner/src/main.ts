import {
  connectNats,
  loadNatsSecurity,
  createLogger,
  runMain,
  startServiceTelemetry,
} from '@dura/service-kit';
import { loadServiceTools } from '@dura/tools';
import { loadPlannerConfig } from './config';
import { createPlanner } from './planner';
import { parseTenantLimits } from './tenant-limits';
import { parseInlineTools, parseTenantAgents, type ToolAuthorization } from './tool-authorization';
import { createScriptedModel, fileCallLog } from '@dura/agents';
import { createAgentModel } from '@dura/agents';
import { createCodeContinuations, loadAgents, withCodeAgents } from '@dura/agents';
import { createModelRouter } from '@dura/agents';
import { createPayloadAccess } from './payload-access';

runMain('planner', async () => {
  const config = loadPlannerConfig();
  const natsSecurity = loadNatsSecurity('planner', config);
  // Tools and the secrets key before any connection: a bad key stops the process at once, with exit code 2.
  const { tools, secrets } = await loadServiceTools('planner', config);
  const log = createLogger({ service: 'planner', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  // First, so every instrument the planner declares is registered with it.
  const telemetry = await startServiceTelemetry({
    service: 'planner',
    log,
    metricsPort: config.METRICS_PORT,
    metricsHost: config.DURA_BIND_HOST,
  });
  // Waits (not ready) while NATS is unreachable; bad credentials still stop the start.
  const nats = await connectNats(config.NATS_URL, 'dura-planner', log, natsSecurity, {
    waitForServer: { log, onWaiting: telemetry.waiting },
  });
  const { registry: agents, codeAgents } = await loadAgents(config.DURA_AGENTS);
  if (agents.names().length > 0)
    log.info('serving agents', {
      agents: agents.names().map((name) => `${name}@${agents.versions(name).join(',')}`),
    });
  if (codeAgents.length > 0)
    log.info('serving code agents', { agents: codeAgents.map((agent) => `${agent.name}@${agent.version}`) });
  const inlineTools = parseInlineTools(config.DURA_INLINE_PLAN_TOOLS);
  const authorization: ToolAuthorization = {
    inlinePlans: config.DURA_INLINE_PLANS,
    ...(inlineTools ? { inlineTools } : {}),
    ...(config.PLANNER_TENANT_AGENTS
      ? { tenantAgents: parseTenantAgents(config.PLANNER_TENANT_AGENTS) }
      : {}),
  };
  log.info('tool authorization', {
    inlinePlans: authorization.inlinePlans,
    inlinePlanTools: config.DURA_INLINE_PLANS ? config.DURA_INLINE_PLAN_TOOLS : 'none',
    tenantAgents: config.PLANNER_TENANT_AGENTS ?? 'every tenant may start every agent',
  });
  const payloads = createPayloadAccess({
    js: nats.js,
    replicas: config.DURA_STREAM_REPLICAS,
    thresholdBytes: config.DURA_PAYLOAD_THRESHOLD_BYTES,
  });
  const scripted = createScriptedModel({
    payloads,
    ...(config.DURA_SCRIPTED_MODEL_LOG ? { callLog: fileCallLog(config.DURA_SCRIPTED_MODEL_LOG) } : {}),
  });
  const planner = createPlanner({
    ...nats,
    model: withCodeAgents({
      agents: codeAgents,
      tools,
      // ctx.model calls go through the LLM adapters with each agent's model settings, priced like JSON agents'.
      prices: agents.prices,
      continuations: createCodeContinuations({ max: config.PLANNER_CODE_CONTINUATIONS }),
      base: createModelRouter({ scripted, agents: createAgentModel({ agents, tools, payloads }), tools }),
    }),
    tools,
    log,
    ...(secrets ? { secrets } : {}),
    concurrency: config.PLANNER_CONCURRENCY,
    ackWaitMs: config.PLANNER_ACK_WAIT_MS,
    snapshotEvery: config.PLANNER_SNAPSHOT_EVERY,
    authorization,
    // Every replica ticks the schedules and serves the event triggers: any one of them dying loses nothing.
    schedules: {},
    eventTriggers: {},
    ...(config.PLANNER_TENANT_MAX_RUNS
      ? {
          tenantLimits: parseTenantLimits(config.PLANNER_TENANT_MAX_RUNS, config.PLANNER_TENANT_LIMIT_POLICY),
        }
      : {}),
    streams: {
      replicas: config.DURA_STREAM_REPLICAS,
      duplicateWindowMs: config.DURA_DUPLICATE_WINDOW_MS,
      storage: 'file',
    },
  });
  await planner.start();
  // Ready: started (streams, buckets and consumers bound) and still connected to NATS.
  telemetry.ready(() => Promise.resolve(nats.nc.isClosed() ? 'the NATS connection is closed' : undefined));
  return {
    graceMs: config.SHUTDOWN_GRACE_MS,
    async stop(drain) {
      await planner.stop(drain);
      await nats.nc.drain();
      await telemetry.stop();
    },
  };
});
