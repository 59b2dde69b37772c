import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DuraError, NATS_SECURITY_FIELDS, type RunRequest } from '@dura/contracts';
import {
  CONFIG_EXIT_CODE,
  ConfigError,
  configFields,
  createLogger,
  loadConfig,
  loadNatsSecurity,
} from '@dura/service-kit';
import { toolModulesFrom } from '@dura/tools';
import { mcpConfigShape, parseMcpServers } from '@dura/mcp';
import { formatEvent } from './format-event';
import { startStack } from './stack';

const DevConfigSchema = z.object({
  NATS_URL: configFields.natsUrl.optional(),
  ...NATS_SECURITY_FIELDS,
  DATABASE_URL: configFields.databaseUrl.optional(),
  DURA_DEV_DATA_DIR: z.string().optional(),
  PROJECTOR_HTTP_PORT: configFields.port.default(8080),
  DURA_BIND_HOST: configFields.bindHost,
  LOG_LEVEL: configFields.logLevel.default('warn'),
  /** Agent definitions for runs that name an agent (see README, "Agents"). */
  DURA_AGENTS: z.string().optional(),
  /** Comma-separated modules exporting tools, added to the built-ins. */
  DURA_TOOLS_MODULES: z.string().optional(),
  /** MCP servers whose tools join the built-ins as `mcp.<server>.<tool>` (docs/mcp.md). */
  ...mcpConfigShape,
  /** Tool arguments and results larger than this go to the object store; the event keeps a reference. */
  DURA_PAYLOAD_THRESHOLD_BYTES: configFields.positiveInt.optional(),
});

/** The example agents, served by default so `--run examples/agents/*.json` works as is. */
const DEFAULT_AGENTS = 'examples/agents/agents.json';

const HELP = `dura dev: planner, tool-gateway and projector in one process, on embedded NATS and Postgres.

Usage: npm run dev -- [--once] [--no-demo] [--run FILE]

  --run FILE   run request to submit (default examples/deploy-pipeline.json)
  --once       exit when the demo run finishes (exit code 0 if it completed)
  --no-demo    start the stack without submitting anything
Environment: NATS_URL, DATABASE_URL (use external servers; NATS_USER/NATS_PASSWORD, NATS_TOKEN,
NATS_NKEY_SEED_FILE, NATS_CREDS_FILE, NATS_TLS_*, NATS_INBOX_PREFIX for a secured NATS), DURA_DEV_DATA_DIR (keep data between starts),
PROJECTOR_HTTP_PORT (default 8080), DURA_BIND_HOST (where the API listens; default 127.0.0.1), LOG_LEVEL (default warn), DURA_AGENTS (agent definitions; default examples/agents/agents.json),
DURA_TOOLS_MODULES (comma-separated modules exporting tools, added to the built-ins),
DURA_MCP_SERVERS (MCP servers whose tools join as mcp.<server>.<tool>; JSON or a file, see docs/mcp.md),
DURA_PAYLOAD_THRESHOLD_BYTES (larger tool arguments and results go to the object store; default 65536).`;

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
  console.log('dura dev: starting planner, tool-gateway and projector…');
  const stack = await startStack({
    ...(config.NATS_URL
      ? { natsUrl: config.NATS_URL, natsSecurity: loadNatsSecurity('dura dev', config) }
      : {}),
    ...(config.DATABASE_URL ? { databaseUrl: config.DATABASE_URL } : {}),
    ...(config.DURA_DEV_DATA_DIR ? { dataDir: config.DURA_DEV_DATA_DIR } : {}),
    httpPort: config.PROJECTOR_HTTP_PORT,
    httpHost: config.DURA_BIND_HOST,
    log,
    agentsFile: config.DURA_AGENTS ?? (existsSync(DEFAULT_AGENTS) ? DEFAULT_AGENTS : undefined),
    toolModules: toolModulesFrom(config.DURA_TOOLS_MODULES),
    mcpServers: parseMcpServers(config.DURA_MCP_SERVERS),
    ...(config.DURA_PAYLOAD_THRESHOLD_BYTES
      ? { payloadThresholdBytes: config.DURA_PAYLOAD_THRESHOLD_BYTES }
      : {}),
  });
  console.log(`  nats      ${stack.natsUrl}${config.NATS_URL ? '' : ' (embedded nats-server)'}`);
  console.log(`  postgres  ${stack.database === 'pglite' ? 'embedded PGlite' : 'DATABASE_URL'}`);
  console.log(`  api       ${stack.apiUrl}/runs (listening on ${stack.apiAddress})`);

  let exitCode = 0;
  if (!values['no-demo']) {
    const file = resolve(values.run ?? 'examples/deploy-pipeline.json');
    const request = JSON.parse(readFileSync(file, 'utf8')) as Omit<RunRequest, 'v'>;
    const { runId } = await stack.client.submitRun(request);
    console.log(`\nsubmitted ${runId} from ${file}; its events, live:\n`);
    let status = 'unknown';
    for await (const event of stack.client.watchRun(runId)) {
      console.log(formatEvent(event));
      if (event.type.startsWith('run_') && event.type !== 'run_requested' && event.type !== 'run_started')
        status = event.type;
    }
    exitCode = status === 'run_completed' ? 0 : 1;
    console.log(
      `\n${runId}: ${status}. State: ${stack.apiUrl}/runs/${runId}  Events: ${stack.apiUrl}/runs/${runId}/events`,
    );
  }
  if (values.once) {
    await stack.stop();
    return exitCode;
  }
  console.log(
    '\nRunning. Submit runs with the client SDK or any NATS client on dura.submit; Ctrl-C to stop.',
  );
  await new Promise<void>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  await stack.stop();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(CONFIG_EXIT_CODE);
    }
    console.error(err instanceof DuraError ? `dura dev: ${err.message}` : err);
    process.exit(1);
  },
);
