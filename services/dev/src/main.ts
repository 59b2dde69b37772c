import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { CONFIG_ERROR_CODE, DuraError, NATS_SECURITY_FIELDS, type RunRequest } from '@dura/contracts';
import {
  CONFIG_EXIT_CODE,
  configFields,
  createLogger,
  loadConfig,
  loadNatsSecurity,
  metricsRoute,
  secretsConfigShape,
  startServiceTelemetry,
} from '@dura/service-kit';
import { toolModulesFrom } from '@dura/tools';
import { mcpConfigShape, parseMcpServers } from '@dura/mcp';
import {
  devStateFile,
  DevStateTaken,
  nextStep,
  readDevStates,
  removeDevState,
  writeDevState,
} from '@dura/client';
import { formatEvent } from './format-event';
import { startStack, type Stack } from './stack';

const DevConfigSchema = z.object({
  NATS_URL: configFields.natsUrl.optional(),
  ...NATS_SECURITY_FIELDS,
  DATABASE_URL: configFields.databaseUrl.optional(),
  DURA_DEV_DATA_DIR: z.string().optional(),
  PROJECTOR_HTTP_PORT: configFields.port.default(8080),
  DURA_BIND_HOST: configFields.bindHost,
  LOG_LEVEL: configFields.logLevel.default('warn'),
  /** Agent definitions for runs that name an agent (see docs/agents.md). */
  DURA_AGENTS: z.string().optional(),
  /** Comma-separated modules exporting tools, added to the built-ins. */
  DURA_TOOLS_MODULES: z.string().optional(),
  /** MCP servers whose tools join the built-ins as `mcp.<server>.<tool>` (docs/mcp.md). */
  ...mcpConfigShape,
  /** Tool arguments and results larger than this go to the object store; the event keeps a reference. */
  DURA_PAYLOAD_THRESHOLD_BYTES: configFields.positiveInt.optional(),
  /** The keys that seal tools' secret fields, as on the planner and the gateway (docs/security/secrets-at-rest.md). */
  ...secretsConfigShape,
  /** The embedded nats-server's port when free (else any free port); 0: always any free port. */
  DURA_DEV_NATS_PORT: z.coerce.number().int().min(0).max(65535).default(4223),
  /** Where the stack records its URLs for the CLI (default: a file of its own, ~/.dura/stacks/<pid>.json). */
  DURA_DEV_STATE_FILE: z.string().optional(),
});

/** The example agents, served by default so `--run examples/agents/*.json` works as is. */
const DEFAULT_AGENTS = 'examples/agents/agents.json';

const HELP = `dura dev: planner, tool-gateway and projector in one process, on embedded NATS and Postgres.

Usage: npm run dev -- [--once] [--no-demo] [--run FILE]

  --run FILE   run request to submit (default examples/deploy-pipeline.json)
  --once       exit when the demo run finishes (exit code 0 if it completed)
  --no-demo    start the stack without submitting anything
The CLI finds this stack without flags: its URLs are recorded in ~/.dura/stacks/<pid>.json (or
DURA_DEV_STATE_FILE) while it runs; with several stacks running, the CLI talks to the newest one.
--nats/--api, NATS_URL and DURA_API_URL still win.

Environment: NATS_URL, DATABASE_URL (use external servers; NATS_USER/NATS_PASSWORD, NATS_TOKEN,
NATS_NKEY_SEED_FILE, NATS_CREDS_FILE, NATS_TLS_*, NATS_INBOX_PREFIX for a secured NATS), DURA_DEV_DATA_DIR (keep data between starts),
PROJECTOR_HTTP_PORT (default 8080), DURA_BIND_HOST (where the API listens; default 127.0.0.1), LOG_LEVEL (default warn), DURA_AGENTS (agent definitions; default examples/agents/agents.json),
DURA_TOOLS_MODULES (comma-separated modules exporting tools, added to the built-ins),
DURA_MCP_SERVERS (MCP servers whose tools join as mcp.<server>.<tool>; JSON or a file, see docs/mcp.md),
DURA_PAYLOAD_THRESHOLD_BYTES (larger tool arguments and results go to the object store; default 65536),
DURA_SECRETS_KEY, DURA_SECRETS_PREVIOUS_KEYS (seal tools' secret fields, as on the planner and the gateway),
DURA_DEV_NATS_PORT (embedded nats-server port when free; default 4223, 0 = any), DURA_DEV_STATE_FILE,
OTEL_* (traces, as for every service; OTEL_TRACES_EXPORTER=console prints a line per span). /metrics is on the API port.`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      once: { type: 'boolean' },
      'no-demo': { type: 'boolean' },
      run: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const config = loadConfig('dura dev', DevConfigSchema);
  const log = createLogger({
    service: 'dev',
    level: config.LOG_LEVEL,
    format: 'pretty',
    write: (line) => process.stderr.write(`${line}\n`),
  });
  const started = Date.now();
  const progress = (step: string) =>
    console.log(`  ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s  ${step}`);
  console.log('dura dev: starting planner, tool-gateway and projector…');
  // First, so every instrument the services declare registers with it; OTEL_* as for the standalone services.
  const telemetry = await startServiceTelemetry({ service: 'dev', log });
  const stateFile = devStateFile({ DURA_DEV_STATE_FILE: config.DURA_DEV_STATE_FILE });
  // Another running stack's file is never overwritten: this one would take its CLI away from it.
  const holder = readDevStates({ DURA_DEV_STATE_FILE: stateFile })[0];
  if (holder && holder.pid !== process.pid) throw new DevStateTaken(stateFile, holder);
  // Set once started; a signal during the start stops what has started so far (startStack cleans up itself).
  const running: { stack?: Stack } = {};
  let stopping = false;
  const shutdown = async (code: number): Promise<never> => {
    stopping = true;
    removeDevState(stateFile, process.pid);
    await running.stack?.stop();
    await telemetry.stop();
    process.exit(code);
  };
  // Ctrl-C at any moment stops everything (the nats-server and its temp dir too); twice: at once.
  const onSignal = () => void (stopping ? process.exit(130) : shutdown(0));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.once('exit', () => removeDevState(stateFile, process.pid));

  const stack = await startStack({
    ...(config.NATS_URL
      ? { natsUrl: config.NATS_URL, natsSecurity: loadNatsSecurity('dura dev', config) }
      : {}),
    ...(config.DATABASE_URL ? { databaseUrl: config.DATABASE_URL } : {}),
    ...(config.DURA_DEV_DATA_DIR ? { dataDir: config.DURA_DEV_DATA_DIR } : {}),
    httpPort: config.PROJECTOR_HTTP_PORT,
    httpHost: config.DURA_BIND_HOST,
    natsPort: config.DURA_DEV_NATS_PORT,
    extraRoutes: [metricsRoute(telemetry.telemetry)],
    onProgress: progress,
    log,
    agentsFile: config.DURA_AGENTS ?? (existsSync(DEFAULT_AGENTS) ? DEFAULT_AGENTS : undefined),
    toolModules: toolModulesFrom(config.DURA_TOOLS_MODULES),
    mcpServers: parseMcpServers(config.DURA_MCP_SERVERS),
    ...(config.DURA_PAYLOAD_THRESHOLD_BYTES
      ? { payloadThresholdBytes: config.DURA_PAYLOAD_THRESHOLD_BYTES }
      : {}),
    ...(config.DURA_SECRETS_KEY ? { secretsKey: config.DURA_SECRETS_KEY } : {}),
    ...(config.DURA_SECRETS_PREVIOUS_KEYS ? { previousSecretsKeys: config.DURA_SECRETS_PREVIOUS_KEYS } : {}),
  });
  running.stack = stack;
  const consoleUrl = `${stack.apiUrl}/ui/`;
  writeDevState(stateFile, {
    v: 1,
    pid: process.pid,
    natsUrl: stack.natsUrl,
    apiUrl: stack.apiUrl,
    consoleUrl,
    startedAt: new Date(started).toISOString(),
  });
  // The console first: it is where a new user looks at runs.
  console.log(`  console   ${consoleUrl}`);
  console.log(`  nats      ${stack.natsUrl}${config.NATS_URL ? '' : ' (embedded nats-server)'}`);
  console.log(`  postgres  ${stack.database === 'pglite' ? 'embedded PGlite' : 'DATABASE_URL'}`);
  console.log(`  api       ${stack.apiUrl}/runs (listening on ${stack.apiAddress})`);
  console.log(`  metrics   ${stack.apiUrl}/metrics`);
  console.log(`  cli       npm run dura -- ls   (finds this stack through ${stateFile})`);

  let exitCode = 0;
  if (!values['no-demo']) {
    const file = resolve(values.run ?? 'examples/deploy-pipeline.json');
    const request = JSON.parse(readFileSync(file, 'utf8')) as Omit<RunRequest, 'v'>;
    const { runId } = await stack.client.submitRun(request);
    console.log(`\nsubmitted ${runId} from ${file}; its events, live:\n`);
    let status = 'unknown';
    for await (const event of stack.client.watchRun(runId)) {
      console.log(formatEvent(event));
      const next = nextStep(event, 'npm run dura --');
      if (next) console.log(`        next: ${next}`);
      if (event.type === 'run_rejected')
        for (const issue of event.data.issues ?? []) console.log(`        ${issue}`);
      if (event.type.startsWith('run_') && event.type !== 'run_requested' && event.type !== 'run_started')
        status = event.type;
    }
    exitCode = status === 'run_completed' ? 0 : 1;
    console.log(
      `\n${runId}: ${status}. State: ${stack.apiUrl}/runs/${runId}  Events: ${stack.apiUrl}/runs/${runId}/events`,
    );
  }
  if (values.once) return shutdown(exitCode);
  console.log(
    '\nRunning. Try: npm run dura -- ls   npm run dura -- run examples/deploy-pipeline.json   Ctrl-C to stop.',
  );
  // Until a signal: the handler above stops the stack and exits.
  return new Promise<number>(() => undefined);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if ((err instanceof DuraError && err.code === CONFIG_ERROR_CODE) || err instanceof DevStateTaken) {
      console.error(err instanceof DevStateTaken ? `dura dev: ${err.message}` : err.message);
      process.exit(CONFIG_EXIT_CODE);
    }
    console.error(err instanceof DuraError ? `dura dev: ${err.message}` : err);
    process.exit(1);
  },
);
