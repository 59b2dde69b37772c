import * as z from 'zod';
import { NATS_SECURITY_FIELDS } from '@dura/contracts';
import { configFields, secretsConfigShape, loadConfig } from '@dura/service-kit';
import { mcpConfigShape } from '@dura/mcp';
import { httpRequestConfigShape } from '@dura/tools';

export const GatewayConfigSchema = z.object({
  NATS_URL: configFields.natsUrl.default('nats://127.0.0.1:4222').describe('The NATS server to connect to.'),
  ...NATS_SECURITY_FIELDS,
  DATABASE_URL: configFields.databaseUrl.describe('The Postgres database the service keeps its tables in.'),
  GATEWAY_CONCURRENCY: configFields.positiveInt.default(32).describe('Tool calls the gateway runs at once.'),
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
  DURA_STREAM_REPLICAS: configFields.replicas.describe(
    'Replicas (1 to 5) of every stream and bucket the services create; 3 in production.',
  ),
  DURA_DUPLICATE_WINDOW_MS: configFields.positiveInt
    .default(120_000)
    .describe('JetStream duplicate window: a message id published again within it is dropped.'),
  DURA_TOOLS_MODULES: z.string().optional().describe('Comma-separated modules exporting tools.'),
  ...secretsConfigShape,
  ...httpRequestConfigShape,
  ...mcpConfigShape,
  /** Serves `/metrics` (Prometheus) and `/healthz` on this port; unset: no HTTP server. 0 picks a free port. */
  METRICS_PORT: configFields.port
    .optional()
    .describe(
      'Serves `/metrics`, `/healthz` and `/readyz` on this port (0: a free port); unset: no metrics server.',
    ),
  DURA_BIND_HOST: configFields.bindHost,
  /** How long the process may take to stop after SIGTERM: in-flight work finishes or is handed back. */
  SHUTDOWN_GRACE_MS: configFields.positiveInt
    .default(25_000)
    .describe('After SIGTERM: time to finish or hand back work, flush the outbox and telemetry, and exit 0.'),
  LOG_LEVEL: configFields.logLevel.describe('`debug`, `info`, `warn` or `error`.'),
  LOG_FORMAT: configFields.logFormat.describe('`json` (one object per line) or `pretty`.'),
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

export function loadGatewayConfig(env?: Record<string, string | undefined>): GatewayConfig {
  return loadConfig('tool-gateway', GatewayConfigSchema, env);
}
