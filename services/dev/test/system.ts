import { eventually } from '@dura/testing';
export { eventually };

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import postgres from 'postgres';
import { freePort, runTsEntry, spawnTsEntry, startDuraService, type TsEntryResult } from '@dura/testing';

/** Spawns one Dura service as its own OS process and waits until it says it is ready. */
export const startService = startDuraService;

export interface SystemHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  sql: postgres.Sql;
  apiUrl: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Plain connections a test uses to observe the system from outside: NATS, the database, the projector's URL. */
export async function openSystem(natsUrl: string, databaseUrl: string): Promise<SystemHandles> {
  const port = await freePort();
  const nc = await connect({ servers: natsUrl });
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => undefined });
  return {
    nc,
    js: jetstream(nc),
    jsm: await jetstreamManager(nc),
    sql,
    apiUrl: `http://127.0.0.1:${port}`,
    env: { NATS_URL: natsUrl, DATABASE_URL: databaseUrl, PROJECTOR_HTTP_PORT: String(port) },
    async close() {
      await nc.close();
      await sql.end({ timeout: 5 });
    },
  };
}

export async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

/** Resolves once the projector's API at `apiUrl` shows run `runId` projected up to `lastSeq`. */
export function untilProjected(
  apiUrl: string,
  runId: string,
  lastSeq: number,
  timeoutMs = 30_000,
): Promise<true> {
  return eventually(
    async () => {
      const { status, body } = await getJson(`${apiUrl}/runs/${runId}`);
      return status === 200 && (body as { lastSeq: number }).lastSeq === lastSeq
        ? (true as const)
        : undefined;
    },
    `the projection of ${runId}`,
    timeoutMs,
  );
}

/** A scripted run of `steps` echo calls, each referencing the previous result. */
export function echoPlan(runId: string, steps: number) {
  return {
    v: 1,
    runId,
    agent: {
      kind: 'scripted',
      steps: Array.from({ length: steps }, (_, i) => ({
        tool: 'echo',
        args: i === 0 ? { step: 1, note: 'first' } : { step: i + 1, previous: `$steps.${i}.step` },
      })),
    },
  };
}

/**
 * Runs `dura <args>` (services/cli) as a child process against a spec's system, to its end: its exit code
 * and its whole output (stdout and stderr).
 */
export function dura(
  sys: { system: { env: Record<string, string | undefined>; apiUrl: string } },
  args: string[],
): Promise<TsEntryResult> {
  return runTsEntry({
    name: `dura ${args[0] ?? ''}`,
    entry: 'services/cli/src/main.ts',
    args,
    env: { NATS_URL: sys.system.env['NATS_URL'], DURA_API_URL: sys.system.apiUrl },
    timeoutMs: 90_000,
  });
}

/**
 * Runs `npm run dev -- --once --run <file>` (services/dev/src/main.ts, its own embedded NATS and database) to
 * its end with `env` on top: its exit code and whole output.
 */
export async function devOnce(
  file: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; output: string }> {
  const proc = spawnTsEntry({
    name: 'dev',
    entry: 'services/dev/src/main.ts',
    args: ['--once', '--run', file],
    env: { NATS_URL: undefined, DATABASE_URL: undefined, PROJECTOR_HTTP_PORT: '0', ...env },
  });
  const exit = await proc.exited;
  return { code: exit.code, output: proc.output() };
}
