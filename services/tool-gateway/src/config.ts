import * as z from 'zod';
import { configFields, configShapes, loadConfig, secretsConfigShape } from '@dura/service-kit';
import { mcpConfigShape } from '@dura/mcp';
import { httpRequestConfigShape } from '@dura/tools';

export const GatewayConfigSchema = z.object({
  ...configShapes.nats,
  DATABASE_URL: configFields.databaseUrl.describe('The Postgres database the service keeps its tables in.'),
  GATEWAY_CONCURRENCY: configFields.positiveInt
    .default(32)
    .describe(
      "Tool tasks the gateway runs at once; it takes four times as many planners' direct calls before it declines one (which then goes out as a tool task).",
    ),
  GATEWAY_MAX_ATTEMPTS: configFields.positiveInt
    .default(3)
    .describe('Attempts per tool call; a `retry.attempts` on the tool wins.'),
  GATEWAY_ACK_WAIT_MS: configFields.positiveInt
    .default(60_000)
    .describe(
      'How long JetStream waits for an ack before it redelivers a message (redelivery after a crash).',
    ),
  GATEWAY_LEASE_MARGIN_MS: configFields.positiveInt
    .default(30_000)
    .describe('A tool call is orphaned after its `timeoutMs` plus this.'),
  GATEWAY_TOOL_CONCURRENCY: z
    .string()
    .optional()
    .describe(
      "Per-tool limits on calls at once across all gateways, `tool=N,other=M`; they win over a tool's `concurrency`.",
    ),
  GATEWAY_SLOT_LEASE_MS: configFields.positiveInt
    .default(15_000)
    .describe(
      "Lease of a concurrency slot, renewed while its call runs; a killed gateway's slot frees after it.",
    ),
  GATEWAY_THROTTLE_WAIT_MS: configFields.positiveInt
    .default(20_000)
    .describe("How long a call over its tool's limit waits for a slot before its task is redelivered later."),
  RELAY_POLL_MS: configFields.positiveInt
    .default(250)
    .describe('How often the outbox relay polls Postgres for events to publish.'),
  /** Longest sleep of the timer firing loop; a new timer wakes it at once through LISTEN/NOTIFY. */
  GATEWAY_TIMER_POLL_MS: configFields.positiveInt
    .default(5_000)
    .describe('Longest sleep of the timer loop; a new timer wakes it at once through LISTEN/NOTIFY.'),
  /** Tool results whose JSON is larger than this go to the object store; the event keeps a reference. */
  DURA_PAYLOAD_THRESHOLD_BYTES: configFields.positiveInt
    .default(65_536)
    .describe(
      'Tool arguments and results larger than this go to the object store; the event keeps a reference.',
    ),
  ...configShapes.streams,
  DURA_TOOLS_MODULES: z.string().optional().describe('Comma-separated modules exporting tools.'),
  ...secretsConfigShape,
  ...httpRequestConfigShape,
  ...mcpConfigShape,
  ...configShapes.process,
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

export function loadGatewayConfig(env?: Record<string, string | undefined>): GatewayConfig {
  return loadConfig('tool-gateway', GatewayConfigSchema, env);
}
