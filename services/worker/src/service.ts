import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { loadAgents } from '@dura/agents';
import type { Db } from '@dura/db';
import { buildPlanner } from '@dura/planner';
import type { Logger, StartWaitOptions, StopOptions } from '@dura/service-kit';
import { buildGateway } from '@dura/tool-gateway';
import type { SecretsBox, ToolRegistry } from '@dura/tools';
import type { WorkerViews } from './config';

export interface WorkerParts {
  /** `loadWorkerConfig()`'s; `loadEmbeddedWorkerConfig()`'s in a process that opens its own database. */
  config: WorkerViews;
  /** One connection for both: an observation and the next turn reach the server in the order they were sent. */
  nats: { js: JetStreamClient; jsm: JetStreamManager };
  db: Db;
  tools: ToolRegistry;
  secrets: SecretsBox | undefined;
  agents: Awaited<ReturnType<typeof loadAgents>>;
  log: Logger;
  refreshTools?: (tool: string) => Promise<void>;
  startWait?: StartWaitOptions;
}

export interface Worker {
  start(): Promise<void>;
  /** The planner first (no new drives), then the gateway drains its calls and flushes the outbox. */
  stop(drain?: StopOptions): Promise<void>;
  /** The tools whose calls run in place inside the planner's drive. */
  localTools(): string[];
}

/** A planner and a tool gateway in one process, the gateway's tools run in place by the planner. Not started. */
export async function buildWorker(parts: WorkerParts): Promise<Worker> {
  const { config, nats, tools, secrets, log } = parts;
  const gateway = buildGateway({
    config: config.gateway,
    nats,
    db: parts.db,
    tools,
    secrets,
    log: log.child({ service: 'tool-gateway' }),
    // Its planner runs the calls in place: no other planner's direct calls come here.
    directCalls: false,
    ...(parts.refreshTools ? { refreshTools: parts.refreshTools } : {}),
    ...(parts.startWait ? { startWait: parts.startWait } : {}),
  });
  const planner = await buildPlanner({
    config: config.planner,
    nats,
    tools,
    secrets,
    log: log.child({ service: 'planner' }),
    localTools: gateway.local,
    agents: parts.agents,
    ...(parts.startWait ? { startWait: parts.startWait } : {}),
  });
  return {
    async start() {
      // The gateway first: the planner runs its calls in place from its first drive on.
      await gateway.start();
      // A planner that cannot start leaves no gateway running behind it: the caller has nothing to stop.
      await planner.start().catch(async (err: unknown) => {
        await gateway.stop().catch(() => undefined);
        throw err;
      });
    },
    async stop(drain) {
      await planner.stop(drain);
      await gateway.stop(drain);
    },
    localTools: () => tools.names().filter((name) => gateway.local.runs(name)),
  };
}
