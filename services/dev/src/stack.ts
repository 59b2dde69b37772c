import { join } from 'node:path';
import { createDuraClient, type DuraClient } from '@dura/client';
import type { NatsSecurity } from '@dura/contracts';
import { openDatabase, type DbHandle } from '@dura/db';
import { loadAgents } from '@dura/agents';
import { createProjector, migrateProjector, projectorRoutes } from '@dura/projector';
import {
  connectNats,
  DEFAULT_BIND_HOST,
  startHttpServer,
  type HttpServerHandle,
  type Logger,
  type NatsHandles,
  type Route,
} from '@dura/service-kit';
import { migrateGateway } from '@dura/tool-gateway';
import { loadToolRegistry, secretsBoxFor } from '@dura/tools';
import { attachMcpServers, type McpServers } from '@dura/mcp';
import { buildWorker, loadEmbeddedWorkerConfig } from '@dura/worker';
import { startEmbeddedNats, type EmbeddedNats } from './embedded-nats';

export interface StackOptions {
  natsUrl?: string;
  /** Credentials and TLS for an external `natsUrl`; one process, so one user whose permissions cover all three. */
  natsSecurity?: NatsSecurity;
  databaseUrl?: string;
  dataDir?: string;
  httpPort: number;
  /** Where the API listens; default 127.0.0.1 (this machine only). */
  httpHost?: string;
  log: Logger;
  /** Agent definitions (JSON or module) the planner serves; scripted plans need none. */
  agentsFile?: string;
  /** Modules whose exported tools join the built-ins, for the planner and the gateway alike. */
  toolModules?: readonly string[];
  /** Tool arguments and results larger than this go to the object store (default 64 KiB). */
  payloadThresholdBytes?: number;
  /**
   * The key (and older keys) that seal tools' secret fields (DURA_SECRETS_KEY, DURA_SECRETS_PREVIOUS_KEYS);
   * unset: none, and a run that gives a secret field is refused as on a planner without a key.
   */
  secretsKey?: string;
  previousSecretsKeys?: string;
  /** Code-agent runs whose live execution is kept between steps (PLANNER_CODE_CONTINUATIONS; default 1000). */
  codeContinuations?: number;
  /** Appends one JSON line per scripted-model call to this file (DURA_SCRIPTED_MODEL_LOG). */
  scriptedModelLog?: string;
  /** MCP servers whose tools join the registry as `mcp.<server>.<tool>` (DURA_MCP_SERVERS). */
  mcpServers?: McpServers;
  /** The embedded nats-server's port when it is free (else any free port); 0 or unset: any free port. */
  natsPort?: number;
  /** More routes on the API port (the dev command adds /metrics). */
  extraRoutes?: Route[];
  /** Told of each start-up step as it is done (a cold start takes seconds: say what is happening). */
  onProgress?: (step: string) => void;
}

export interface Stack {
  natsUrl: string;
  apiUrl: string;
  /** The address the API is bound to, e.g. 127.0.0.1:8080. */
  apiAddress: string;
  database: 'postgres' | 'pglite';
  client: DuraClient;
  stop(): Promise<void>;
}

/**
 * `dura dev`: a worker (planner and tool gateway on one NATS connection, built by the production worker's
 * `buildWorker`) and a projector in one process, over a private nats-server and an embedded PGlite unless
 * NATS_URL / DATABASE_URL point elsewhere.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  const progress = options.onProgress ?? (() => undefined);
  try {
    let embedded: EmbeddedNats | undefined;
    if (!options.natsUrl) {
      embedded = await startEmbeddedNats({ dataDir: options.dataDir, preferredPort: options.natsPort });
      stops.push(() => (embedded as EmbeddedNats).stop());
      progress(`nats-server ready at ${embedded.url} (store ${embedded.storeDir})`);
    }
    const natsUrl = options.natsUrl ?? (embedded as EmbeddedNats).url;
    if (!options.databaseUrl)
      progress('opening the embedded PGlite database (the slow part of a cold start)…');
    const database: DbHandle = await openDatabase({
      ...(options.databaseUrl ? { url: options.databaseUrl } : {}),
      ...(options.dataDir ? { pgliteDir: join(options.dataDir, 'pglite') } : {}),
      // What a Postgres step waits for (the migration lock another process holds) is said, not waited on silently.
      start: { onWaiting: (reason) => options.log.warn(reason) },
    });
    stops.push(() => database.close());
    progress(`database open (${database.kind === 'pglite' ? 'embedded PGlite' : 'DATABASE_URL'})`);
    await migrateGateway(database);
    await migrateProjector(database);
    progress('database migrated');

    const connect = async (name: string): Promise<NatsHandles> => {
      const handles = await connectNats(natsUrl, name, options.log, options.natsSecurity);
      stops.push(() => handles.nc.drain());
      return handles;
    };
    const tools = await loadToolRegistry(options.toolModules ?? []);
    const mcp = await attachMcpServers(
      options.mcpServers ?? {},
      tools,
      options.log.child({ service: 'mcp' }),
    );
    stops.push(() => mcp.close());
    // Only with a key: without one, as on a planner without DURA_SECRETS_KEY, nothing is sealed.
    const secrets = options.secretsKey
      ? secretsBoxFor('dura dev', tools.withSecrets(), options.secretsKey, options.previousSecretsKeys)
      : undefined;
    const loaded = await loadAgents(options.agentsFile);
    // The planner and the gateway share one connection, as in a worker: an observation and the next turn
    // then reach the server in the order they were sent (see docs/workers.md).
    const workerNats = await connect('dura-dev-worker');
    // The production worker's assembly (start: the gateway first; stop: the planner first), configured as a
    // worker with no variables set but what the dev command decides (devWorkerEnv).
    const worker = await buildWorker({
      config: loadEmbeddedWorkerConfig('dura dev', devWorkerEnv(options)),
      nats: workerNats,
      db: database.db,
      tools,
      secrets,
      agents: loaded,
      log: options.log,
      refreshTools: (tool) => mcp.refreshFor(tool),
    });
    const projectorNats = await connect('dura-dev-projector');
    const projector = createProjector({
      ...projectorNats,
      db: database.db,
      log: options.log.child({ service: 'projector' }),
    });
    // Each announces what it serves to the console's catalogue while it runs: every agent to every tenant,
    // as the planner here allows, and every tool.
    await worker.start();
    stops.push(() => worker.stop());
    await projector.start();
    stops.push(() => projector.stop());
    progress('planner, tool-gateway and projector started');
    const host = options.httpHost ?? DEFAULT_BIND_HOST;
    const routes = [
      ...projectorRoutes({ ...projectorNats, db: database.db, position: projector.position }),
      ...(options.extraRoutes ?? []),
    ];
    const http: HttpServerHandle = await startHttpServer({
      port: options.httpPort,
      host,
      routes,
      log: options.log,
    }).catch(() => startHttpServer({ port: 0, host, routes, log: options.log }));
    stops.push(() => http.close());

    const client = createDuraClient(await connect('dura-dev-client'));
    return {
      natsUrl,
      apiUrl: http.url,
      apiAddress: http.address,
      database: database.kind,
      client,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * The worker's variables as the dev command sets them; every other one keeps the worker's default
 * (PLANNER_CONCURRENCY 64, as calls run in place inside the drive).
 */
function devWorkerEnv(options: StackOptions): Record<string, string | undefined> {
  const text = (value: number | undefined) => (value === undefined ? undefined : String(value));
  return {
    // Local development runs the demo's inline plans, and every tenant may start every agent; the planner
    // service defaults to neither (DURA_INLINE_PLANS, PLANNER_TENANT_AGENTS).
    DURA_INLINE_PLANS: 'true',
    PLANNER_TENANT_AGENTS: '*=*',
    DURA_PAYLOAD_THRESHOLD_BYTES: text(options.payloadThresholdBytes),
    PLANNER_CODE_CONTINUATIONS: text(options.codeContinuations),
    DURA_SCRIPTED_MODEL_LOG: options.scriptedModelLog,
  };
}
