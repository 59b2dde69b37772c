import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTsEntry, spawnTsEntry } from '@dura/testing';
import { devOnce } from './system';

describe('service entry points', () => {
  it.each([
    ['planner', { NATS_URL: 'http://localhost:4222' }, /NATS_URL: must be a NATS URL/],
    [
      'tool-gateway',
      { NATS_URL: 'nats://127.0.0.1:1', DATABASE_URL: undefined },
      /DATABASE_URL: .*\(not set\)/,
    ],
    [
      'projector',
      { DATABASE_URL: 'postgres://x@127.0.0.1/db', PROJECTOR_HTTP_PORT: 'eighty' },
      /PROJECTOR_HTTP_PORT: .*"eighty"/,
    ],
    [
      'tool-gateway',
      {
        NATS_URL: 'nats://127.0.0.1:1',
        DATABASE_URL: 'postgres://x@127.0.0.1:1/db',
        DURA_SECRETS_KEY: 'k1:short',
      },
      /DURA_SECRETS_KEY must be .*got a value with 3 key bytes/,
    ],
    ['worker', { NATS_URL: 'nats://127.0.0.1:1', DATABASE_URL: undefined }, /DATABASE_URL: .*\(not set\)/],
    // The planner and the worker read the key as the gateway does, before any connection.
    [
      'planner',
      { NATS_URL: 'nats://127.0.0.1:1', DURA_SECRETS_KEY: 'k1:short' },
      /DURA_SECRETS_KEY must be .*got a value with 3 key bytes/,
    ],
    [
      'worker',
      {
        NATS_URL: 'nats://127.0.0.1:1',
        DATABASE_URL: 'postgres://x@127.0.0.1:1/db',
        DURA_SECRETS_KEY: 'k1:short',
      },
      /DURA_SECRETS_KEY must be .*got a value with 3 key bytes/,
    ],
  ] as const)(
    '%s exits with code 2 and names the variable when its configuration is invalid (%j)',
    async (name, env, message) => {
      const proc = spawnTsEntry({ name, entry: `services/${name}/src/main.ts`, env: { ...env } });
      const exit = await proc.exited;
      expect(exit.code).toBe(2);
      expect(proc.output()).toMatch(message);
    },
  );

  it.each([
    ['planner', 'services/planner/src/main.ts'],
    ['worker', 'services/worker/src/main.ts'],
  ])(
    'the %s exits with code 2 when its agents module cannot import zod, pointing at own-repository.md',
    async (name, entry) => {
      // A module outside the checkout resolves its imports from its own folder, which has no node_modules.
      const dir = mkdtempSync(join(tmpdir(), 'dura-outside-agents-'));
      try {
        const agents = join(dir, 'agents.ts');
        writeFileSync(
          agents,
          "import { z } from 'zod';\nexport const Input = z.object({});\nexport default { agents: [] };\n",
        );
        // Before any connection: neither NATS nor Postgres is there to wait for.
        const proc = spawnTsEntry({
          name,
          entry,
          env: {
            NATS_URL: 'nats://127.0.0.1:1',
            DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
            DURA_AGENTS: agents,
          },
        });
        const exit = await proc.exited;
        expect(exit.code).toBe(2);
        expect(proc.output()).toContain(`cannot load agent definitions from ${agents} (DURA_AGENTS)`);
        expect(proc.output()).toContain("Cannot find module 'zod'");
        expect(proc.output()).toContain('docs/own-repository.md');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('`npm run dev -- --once` runs the demo on an embedded nats-server and PGlite', async () => {
    const proc = spawnTsEntry({
      name: 'dev',
      entry: 'services/dev/src/main.ts',
      args: ['--once'],
      env: { NATS_URL: undefined, DATABASE_URL: undefined, PROJECTOR_HTTP_PORT: '0' },
    });
    const exit = await proc.exited;
    const output = proc.output();
    expect(exit.code, output).toBe(0);
    expect(output).toMatch(/embedded nats-server/);
    expect(output).toMatch(/embedded PGlite/);
    expect(output.match(/tool_call_completed/g)).toHaveLength(5);
    expect(output).toMatch(
      /run_completed\s+output \{"image":"checkout:9f2c1e7","deployment":"dep-[0-9a-f]{12}"\}/,
    );
  }, 90_000);

  it.each([
    [
      'examples/agents/fanout.json',
      {},
      [
        /thought +steps 1-3 of 4: demo\.build, demo\.build, demo\.build/,
        /run_completed +output \{"cart":"cart:7c1d2e3","search":"search:7c1d2e3","checkout":"checkout:7c1d2e3"\}/,
      ],
    ],
    [
      'examples/agents/large-payload.json',
      { DURA_PAYLOAD_THRESHOLD_BYTES: '512' },
      [
        /tool_call_completed +call-1 -> object store sha256:[0-9a-f]{12}… \(\d+ bytes\)/,
        /run_completed +output \{"report":"All 4,096/,
      ],
    ],
  ] as const)(
    'the README example %s runs to completion on `npm run dev -- --once`',
    async (file, env, expected) => {
      const { code, output } = await devOnce(file, env);
      expect(code, output).toBe(0);
      for (const line of expected) expect(output).toMatch(line);
    },
    90_000,
  );
});

describe('`npm run dev` at a wait', () => {
  it('prints the command that resolves it, and that command, copied as is, finds the stack and resolves it', async () => {
    const stateFile = join(tmpdir(), `dura-dev-wait-${process.pid}.json`);
    const proc = spawnTsEntry({
      name: 'dev',
      entry: 'services/dev/src/main.ts',
      args: ['--once', '--run', 'examples/agents/release.json'],
      env: {
        NATS_URL: undefined,
        DATABASE_URL: undefined,
        PROJECTOR_HTTP_PORT: '0',
        DURA_DEV_NATS_PORT: '0',
        DURA_DEV_STATE_FILE: stateFile,
      },
    });
    const hint = await proc.waitForOutput(
      /next: run \S+ waits for approval of call-3 \(until [^)]+, then reject\): npm run dura -- approve \S+ --call call-3/,
      90_000,
    );
    const command = /npm run dura -- (approve \S+ --call call-3)/.exec(hint)?.[1]?.split(' ') ?? [];
    const approve = await runTsEntry({
      name: 'dura approve',
      entry: 'services/cli/src/main.ts',
      args: command,
      env: { NATS_URL: undefined, DURA_API_URL: undefined, DURA_DEV_STATE_FILE: stateFile },
    });
    expect(approve.output).toMatch(/^sent approve \{"callId":"call-3","approved":true\} to \S+/m);
    const exit = await proc.exited;
    expect(exit.code, proc.output()).toBe(0);
    expect(proc.output()).toMatch(/run_completed +output \{"image":"checkout:9f2c1e7"/);
  }, 150_000);
});
