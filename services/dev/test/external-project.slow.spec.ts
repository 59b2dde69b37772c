// Tools and code agents kept in a project outside the Dura checkout, on real NATS, Postgres and processes.
// The test packs the SDK (`scripts/sdk-pack.mjs`, what `npm run sdk:pack` runs) into a fresh directory under
// the OS temp dir, copies examples/external-project there (the code docs/own-repository.md shows), installs
// it with npm from the tarballs, typechecks it against the packed .d.ts, and runs its tool and code agent on
// the stack: the planner and the gateway load the project's modules, which import the project's own copies
// of @dura/tools, @dura/code-agents and zod. The project's own script (src/submit.ts) submits a run through
// its installed @dura/client and follows it to its end.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { repoRoot, spawnTsEntry } from '@dura/testing';
import { useCrashSystem, watchToEnd } from './crash-harness';

const ROOT = repoRoot();
const EXAMPLE = join(ROOT, 'examples', 'external-project');

// A second tool module of the project, for the test only: a refusal thrown with the project's own ToolError.
const REFUSING_TOOLS = `import { z } from 'zod';
import { defineTool, ToolError } from '@dura/tools';

export const refund = defineTool({
  name: 'billing.refund',
  description: 'Refuses every refund: the window has closed.',
  input: z.object({ chargeId: z.string() }),
  safety: 'unsafe',
  execute: () => Promise.reject(new ToolError('refund_window_closed', 'the refund window has closed', { retryable: false })),
});
`;

/** Runs a command to its end; rejects with its output when it fails. */
function run(
  command: string,
  args: string[],
  cwd: string,
  extra: Record<string, string> = {},
): Promise<string> {
  // npm's own variables from an enclosing `npm run` would point the install at the monorepo.
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))),
    ...extra,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${command} ${args.join(' ')} (exit ${code}):\n${output}`)),
    );
  });
}

const project = mkdtempSync(join(tmpdir(), 'dura-external-project-'));
const tools = `${join(project, 'src', 'tools.ts')},${join(project, 'src', 'refusing-tools.ts')}`;
const invoiceRequest = join(project, 'requests', 'invoice.json');

const crash = useCrashSystem([], {
  env: (name): Record<string, string> => ({
    DURA_TOOLS_MODULES: tools,
    ...(name === 'planner' ? { DURA_AGENTS: join(project, 'src', 'agents.ts') } : {}),
  }),
});

beforeAll(async () => {
  expect(relative(ROOT, project).startsWith('..'), `${project} lies outside ${ROOT}`).toBe(true);
  cpSync(EXAMPLE, project, {
    recursive: true,
    filter: (source) => !/[\\/](node_modules|dist)$|\.tgz$/.test(source),
  });
  writeFileSync(join(project, 'src', 'refusing-tools.ts'), REFUSING_TOOLS);
  await run(
    process.execPath,
    [join(ROOT, 'scripts', 'sdk-pack.mjs'), '--out', join(project, 'vendor')],
    ROOT,
  );
  const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const named = Object.values(manifest.dependencies)
    .filter((spec) => spec.startsWith('file:vendor/'))
    .map((spec) => spec.slice('file:vendor/'.length))
    .sort();
  const packed = readdirSync(join(project, 'vendor')).filter((file) => file.endsWith('.tgz'));
  // The framework adapters ship too; a project adds one when it uses that framework (docs/ai-sdk.md,
  // docs/openai-agents.md), so the example, which uses neither, names every other tarball.
  const adapters = packed.filter((file) => /^dura-(ai-sdk|openai-agents)-/.test(file));
  expect(adapters, 'sdk:pack makes the AI SDK and Agents SDK adapters').toHaveLength(2);
  expect(
    packed.filter((file) => !adapters.includes(file)).sort(),
    'examples/external-project/package.json names the tarballs sdk:pack makes',
  ).toEqual(named);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], project);
  // The packed .d.ts are what the project compiles against (no skipLibCheck in its tsconfig).
  await run(
    process.execPath,
    [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project],
    project,
  );

  const sys = crash();
  const env = { BILLING_URL: sys.witness.url };
  await sys.restart('tool-gateway', undefined, env);
  await sys.restart('planner', undefined, env);
}, 300_000);

afterAll(() => rmSync(project, { recursive: true, force: true }));

const dataOf = <T extends RunEvent['type']>(log: RunEvent[], type: T) =>
  log.flatMap((e) => (e.type === type ? [e.data as Extract<RunEvent, { type: T }>['data']] : []));

describe('a project outside the repository', () => {
  it('installed the SDK from the tarballs: its own copies, not links into the checkout', () => {
    for (const name of ['tools', 'code-agents', 'contracts', 'core', 'client', 'event-store', 'telemetry']) {
      const installed = JSON.parse(
        readFileSync(join(project, 'node_modules', '@dura', name, 'package.json'), 'utf8'),
      ) as { exports: Record<string, unknown> };
      expect(installed.exports['.'], `@dura/${name}`).toEqual({
        types: './dist/index.d.ts',
        default: './dist/index.js',
      });
    }
  });

  it("runs its code agent, which calls its tool: the run completes with the tool's result, one charge", async () => {
    const sys = crash();
    const runId = 'external-invoice-1';
    const request = JSON.parse(readFileSync(invoiceRequest, 'utf8')) as {
      agent: { kind: 'agent'; name: string };
    };
    await sys.submit({ ...request, runId });
    const log = await watchToEnd(sys, runId, 120_000);
    expect(log.at(-1)?.type, log.map((e) => e.type).join(', ')).toBe('run_completed');
    expect(dataOf(log, 'run_started')[0]).toMatchObject({
      pinned: { agent: 'invoice', version: '1', provider: 'code' },
    });
    const [call, ...others] = dataOf(log, 'tool_call_requested');
    expect(others).toEqual([]);
    expect(call).toMatchObject({ tool: 'billing.charge', args: { customer: 'c-42', amount: 1500 } });
    const key = call!.idempotencyKey;
    expect(sys.witness.effects(key)).toBe(1);
    expect(sys.witness.requests(key)).toBe(1);
    const [completed] = dataOf(log, 'tool_call_completed');
    expect(completed?.result).toMatchObject({ chargeId: expect.stringMatching(/^ch_/), amount: 1500 });
    expect(fold(log).output).toMatchObject({ customer: 'c-42', total: 1500, receipt: completed!.result });
  });

  it('submits a run from its own script through its installed @dura/client and follows it to run_completed', async () => {
    const sys = crash();
    const runId = 'external-client-1';
    // src/submit.ts as docs/own-repository.md runs it: Node (22.18 or later) runs the TypeScript as it is.
    const output = await run(
      process.execPath,
      [join('src', 'submit.ts'), 'requests/invoice.json', runId],
      project,
      {
        NATS_URL: sys.system.env['NATS_URL']!,
      },
    );
    expect(output).toContain(`submitted ${runId}`);
    expect(output).toMatch(/run_completed\s+output \{"invoiceId":"[0-9a-f-]{36}"/);
    // The run the script followed is the one on the stream: completed, its one charge made once.
    const log = await watchToEnd(sys, runId, 120_000);
    expect(log.at(-1)?.type).toBe('run_completed');
    const [call, ...others] = dataOf(log, 'tool_call_requested');
    expect(others).toEqual([]);
    expect(sys.witness.effects(call!.idempotencyKey)).toBe(1);
    // The client resolved from the project's node_modules, not from the checkout.
    const resolved = await run(
      process.execPath,
      ['--input-type=module', '-e', "console.log(import.meta.resolve('@dura/client'))"],
      project,
    );
    expect(resolved.trim()).toBe(
      pathToFileURL(join(project, 'node_modules', '@dura', 'client', 'dist', 'index.js')).href,
    );
  });

  it('runs on `npm run dev` with DURA_AGENTS and DURA_TOOLS_MODULES naming its modules', async () => {
    const sys = crash();
    const before = new Set(sys.witness.keys());
    const proc = spawnTsEntry({
      name: 'dev',
      entry: 'services/dev/src/main.ts',
      args: ['--once', '--run', invoiceRequest],
      env: {
        NATS_URL: undefined,
        DATABASE_URL: undefined,
        PROJECTOR_HTTP_PORT: '0',
        DURA_AGENTS: join(project, 'src', 'agents.ts'),
        DURA_TOOLS_MODULES: join(project, 'src', 'tools.ts'),
        BILLING_URL: sys.witness.url,
      },
    });
    try {
      const exit = await proc.exited;
      const output = proc.output();
      expect(exit.code, output).toBe(0);
      expect(output).toMatch(/tool_call_completed/);
      expect(output).toMatch(/run_completed\s+output \{"invoiceId":"[0-9a-f-]{36}"/);
      const charged = sys.witness.keys().filter((key) => !before.has(key));
      expect(charged).toHaveLength(1);
      expect(sys.witness.effects(charged[0]!)).toBe(1);
    } finally {
      await proc.kill('SIGKILL');
    }
  }, 180_000);

  it("fails a call terminally with the code of the project's own ToolError, after one attempt", async () => {
    const sys = crash();
    const runId = 'external-refund-1';
    await sys.submit({
      runId,
      agent: { kind: 'scripted', steps: [{ tool: 'billing.refund', args: { chargeId: 'ch_000001' } }] },
    });
    const log = await watchToEnd(sys, runId, 120_000);
    expect(log.at(-1)?.type, log.map((e) => e.type).join(', ')).toBe('run_failed');
    const failed = dataOf(log, 'tool_call_failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      error: { code: 'refund_window_closed' },
      retryable: false,
      attempt: 1,
    });
  });
});

describe('docs/own-repository.md', () => {
  it('shows the files this test runs, as they are', () => {
    const page = readFileSync(join(ROOT, 'docs', 'own-repository.md'), 'utf8');
    for (const file of [
      'package.json',
      'tsconfig.json',
      'src/tools.ts',
      'src/agents.ts',
      'src/submit.ts',
      'requests/invoice.json',
      'Dockerfile',
    ]) {
      const text = readFileSync(join(EXAMPLE, file), 'utf8');
      expect(page, `the page quotes examples/external-project/${file} in full`).toContain(`\n${text}\`\`\``);
    }
  });

  it("builds its images on Dura's and names modules the project has", () => {
    const dockerfile = readFileSync(join(EXAMPLE, 'Dockerfile'), 'utf8');
    const bases = [...dockerfile.matchAll(/^FROM (dura\/[a-z-]+):/gm)].map((m) => m[1]);
    expect(bases.sort()).toEqual(['dura/planner', 'dura/tool-gateway']);
    for (const base of bases)
      expect(
        readFileSync(join(ROOT, 'deploy', 'base', `${base!.slice('dura/'.length)}.yaml`), 'utf8'),
      ).toContain(`image: ${base}`);
    const modules = [...dockerfile.matchAll(/DURA_(?:TOOLS_MODULES|AGENTS)=(\S+)/g)].map((m) => m[1]!);
    expect(modules.length).toBeGreaterThan(0);
    for (const path of modules) {
      expect(path.startsWith('/opt/acme/'), path).toBe(true);
      expect(existsSync(join(EXAMPLE, path.slice('/opt/acme/'.length))), path).toBe(true);
    }
  });
});
