import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { connectionOf } from '@dura/event-store';
import { announcingWhileStarted, type Logger, type StartWaitOptions } from '@dura/service-kit';
import type { SecretsBox, ToolRegistry } from '@dura/tools';
import { loadAgents } from '@dura/agents';
import { agentCatalogue } from './agent-catalogue';
import type { PlannerConfig } from './config';
import { createPayloadAccess } from './payload-access';
import { createPlannerModel } from './planner-model';
import { createPlanner, type Planner } from './planner';
import { createFlowControl, wakeFor } from './flow-control';
import { createFlowStore } from './flow-store';
import { createDirectCalls } from './direct-calls';
import type { LocalTools } from './run-driver';
import { parseTenantLimits } from './tenant-limits';
import {
  parseInlineTools,
  parseTenantAgents,
  UNSET_TENANT_AGENTS,
  type ToolAuthorization,
} from './tool-authorization';

export interface PlannerServiceParts {
  config: PlannerConfig;
  nats: { js: JetStreamClient; jsm: JetStreamManager };
  tools: ToolRegistry;
  secrets: SecretsBox | undefined;
  log: Logger;
  /** A gateway in the same process (a worker): calls of its tools run in place. Else direct calls, when on. */
  localTools?: LocalTools;
  /** Waits (not ready) while a JetStream cluster cannot place the streams yet. */
  startWait?: StartWaitOptions;
  /** `DURA_AGENTS` loaded already (before any connection); loaded here when absent. */
  agents?: Awaited<ReturnType<typeof loadAgents>>;
}

/** The planner as its configuration describes it: agents, models, authorization and limits. Not started. */
export async function buildPlanner(parts: PlannerServiceParts): Promise<Planner> {
  const { config, nats, tools, secrets, log } = parts;
  const loaded = parts.agents ?? (await loadAgents(config.DURA_AGENTS));
  const { registry: agents, codeAgents } = loaded;
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
    tenantAgents: config.PLANNER_TENANT_AGENTS
      ? parseTenantAgents(config.PLANNER_TENANT_AGENTS)
      : UNSET_TENANT_AGENTS,
  };
  log.info('tool authorization', {
    inlinePlans: authorization.inlinePlans,
    inlinePlanTools: config.DURA_INLINE_PLANS ? config.DURA_INLINE_PLAN_TOOLS : 'none',
    tenantAgents:
      config.PLANNER_TENANT_AGENTS ??
      'PLANNER_TENANT_AGENTS unset: tenant default may start every agent, every other tenant none',
  });
  const payloads = createPayloadAccess({
    js: nats.js,
    replicas: config.DURA_STREAM_REPLICAS,
    thresholdBytes: config.DURA_PAYLOAD_THRESHOLD_BYTES,
  });
  const flow = createFlowControl({
    store: createFlowStore({ js: nats.js, log, replicas: config.DURA_STREAM_REPLICAS }),
    limits: config.DURA_MODEL_LIMITS,
    leaseMs: config.DURA_MODEL_CALL_LEASE_MS,
    wake: wakeFor(nats.js),
  });
  if (config.DURA_MODEL_LIMITS.length > 0)
    log.info('model limits', { limits: config.DURA_MODEL_LIMITS.map((limit) => JSON.stringify(limit)) });
  const onRateLimited = (model: string, retryAfterMs: number | undefined): void => {
    flow
      .throttle(model, retryAfterMs ?? 1_000)
      .catch((err: unknown) => log.warn('could not lower the rate of a model after a 429', { model, err }));
  };
  const localTools = parts.localTools ?? directCalls(parts);
  const planner = createPlanner({
    ...nats,
    model: createPlannerModel({
      agents: loaded,
      tools,
      payloads,
      codeContinuations: config.PLANNER_CODE_CONTINUATIONS,
      scriptedModelLog: config.DURA_SCRIPTED_MODEL_LOG,
      onRateLimited,
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
    ...(localTools ? { localTools } : {}),
    flow: { limits: config.DURA_MODEL_LIMITS, control: flow },
    ...(parts.startWait ? { startWait: parts.startWait } : {}),
    streams: {
      replicas: config.DURA_STREAM_REPLICAS,
      duplicateWindowMs: config.DURA_DUPLICATE_WINDOW_MS,
      storage: 'file',
    },
  });
  // The agents it serves, and which tenants may start each, for the API's catalogue (GET /agents).
  return announcingWhileStarted(planner, {
    js: nats.js,
    log,
    replicas: config.DURA_STREAM_REPLICAS,
    entries: () => agentCatalogue(loaded, authorization.tenantAgents, new Date()),
  });
}

/** The gateways' tools as direct calls, unless PLANNER_DIRECT_CALLS is off (or there is no connection to ask on). */
function directCalls(parts: PlannerServiceParts): LocalTools | undefined {
  if (!parts.config.PLANNER_DIRECT_CALLS) return undefined;
  const nc = connectionOf(parts.nats.js);
  if (!nc) {
    parts.log.warn('direct calls off: no NATS connection to ask gateways on; every call goes as a tool task');
    return undefined;
  }
  return createDirectCalls({ nc, js: parts.nats.js, tools: parts.tools, log: parts.log });
}
