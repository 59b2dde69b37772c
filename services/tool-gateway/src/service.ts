import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Db } from '@dura/db';
import { announcingWhileStarted, ConfigError, type Logger, type StartWaitOptions } from '@dura/service-kit';
import type { SecretsBox, ToolRegistry } from '@dura/tools';
import type { GatewayConfig } from './config';
import { createToolGateway, type ToolGateway } from './gateway';
import { toolCatalogue } from './tool-catalogue';
import { parseToolConcurrency } from './tool-slots';

export interface GatewayServiceParts {
  /** DATABASE_URL is not read: the database comes open (`db`), so a host with its own (`dura dev`) needs none. */
  config: Omit<GatewayConfig, 'DATABASE_URL'>;
  nats: { js: JetStreamClient; jsm: JetStreamManager };
  db: Db;
  tools: ToolRegistry;
  secrets: SecretsBox | undefined;
  log: Logger;
  /** Lists a changing tool source again before a tool is declared unknown (the MCP servers). */
  refreshTools?: (tool: string) => Promise<void>;
  /** Waits (not ready) while a JetStream cluster cannot place the streams yet. */
  startWait?: StartWaitOptions;
  /** False: answers no planner's direct calls (a worker's gateway: its planner runs the calls in place). */
  directCalls?: boolean;
}

/** The tool gateway as its configuration describes it. Not started. */
export function buildGateway(parts: GatewayServiceParts): ToolGateway {
  const { config, nats, db, tools, secrets, log } = parts;
  const toolConcurrency = toolConcurrencyConfig(config.GATEWAY_TOOL_CONCURRENCY);
  const gateway = createToolGateway({
    ...nats,
    db,
    tools,
    log,
    ...(parts.refreshTools ? { refreshTools: parts.refreshTools } : {}),
    ...(parts.startWait ? { startWait: parts.startWait } : {}),
    ...(parts.directCalls === false ? { directCalls: false } : {}),
    ...(secrets ? { secrets } : {}),
    toolConcurrency,
    slotLeaseMs: config.GATEWAY_SLOT_LEASE_MS,
    throttleWaitMs: config.GATEWAY_THROTTLE_WAIT_MS,
    concurrency: config.GATEWAY_CONCURRENCY,
    maxAttempts: config.GATEWAY_MAX_ATTEMPTS,
    ackWaitMs: config.GATEWAY_ACK_WAIT_MS,
    leaseMarginMs: config.GATEWAY_LEASE_MARGIN_MS,
    relayPollMs: config.RELAY_POLL_MS,
    timerPollMs: config.GATEWAY_TIMER_POLL_MS,
    payloadThresholdBytes: config.DURA_PAYLOAD_THRESHOLD_BYTES,
    streams: {
      replicas: config.DURA_STREAM_REPLICAS,
      duplicateWindowMs: config.DURA_DUPLICATE_WINDOW_MS,
      storage: 'file',
    },
  });
  // The tools it runs and their limits, for the API's catalogue (GET /tools); again when an MCP server's change.
  return announcingWhileStarted(gateway, {
    js: nats.js,
    log,
    replicas: config.DURA_STREAM_REPLICAS,
    entries: () =>
      toolCatalogue(tools, { toolConcurrency, maxAttempts: config.GATEWAY_MAX_ATTEMPTS }, new Date()),
    onChange: (changed) => tools.onChange(changed),
  });
}

function toolConcurrencyConfig(text: string | undefined): Record<string, number> {
  try {
    return parseToolConcurrency(text);
  } catch (err) {
    throw new ConfigError('tool-gateway', [`GATEWAY_TOOL_CONCURRENCY: ${(err as Error).message}`]);
  }
}
