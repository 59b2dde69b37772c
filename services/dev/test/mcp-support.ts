// Shared by the mcp-*.e2e.spec.ts files: the witness MCP servers (built with the SDK) the services reach,
// one over Streamable HTTP in this process (its counters survive a killed gateway) and one over stdio that
// each service starts as its child, and the DURA_MCP_SERVERS value that names them.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import type { McpServers } from '@dura/mcp';
import {
  startWitnessHttpServer,
  WITNESS_STDIO_ENTRY,
  type WitnessCall,
  type WitnessHttpServer,
} from '@dura/mcp/testing';

export interface McpWitnesses {
  http: WitnessHttpServer;
  /** The calls the stdio servers of every service received (each service starts its own). */
  stdioCalls(): Promise<WitnessCall[]>;
  /** `DURA_MCP_SERVERS` for planner and gateway: `web` (HTTP, with a bearer token) and `local` (stdio). */
  env(): Record<string, string>;
}

const TOKEN = 'witness-mcp-token-0123456789';

/** Registers beforeAll/afterAll; call it before useCrashSystem, so the servers run when the services start. */
export function useMcpWitnesses(
  overrides: (servers: McpServers) => McpServers = (servers) => servers,
): () => McpWitnesses {
  let http: WitnessHttpServer | undefined;
  let dir: string | undefined;
  let current: McpWitnesses | undefined;
  beforeAll(async () => {
    http = await startWitnessHttpServer({ token: TOKEN });
    dir = await mkdtemp(join(tmpdir(), 'dura-mcp-'));
    const callsFile = join(dir, 'stdio-calls.jsonl');
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const servers: McpServers = overrides({
      web: {
        transport: 'http',
        url: http.url,
        headers: { authorization: { env: 'WITNESS_MCP_AUTHORIZATION' } },
        timeoutMs: 15_000,
      },
      local: {
        transport: 'stdio',
        command: process.execPath,
        args: ['--import', tsx, WITNESS_STDIO_ENTRY, callsFile],
      },
    });
    const h = http;
    current = {
      http: h,
      stdioCalls: async () =>
        (await readFile(callsFile, 'utf8').catch(() => ''))
          .split('\n')
          .filter((line) => line.length > 0)
          .map((line) => JSON.parse(line) as WitnessCall),
      env: () => ({
        DURA_MCP_SERVERS: JSON.stringify(servers),
        WITNESS_MCP_AUTHORIZATION: `Bearer ${TOKEN}`,
      }),
    };
  });
  afterAll(async () => {
    await http?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!current) throw new Error('useMcpWitnesses(): only available inside tests, after beforeAll');
    return current;
  };
}
