// A real Dura stack for the console's browser tests: a private nats-server and Postgres database, the planner,
// tool gateway and projector as their own processes (the projector with API tokens and the built console),
// a fake OpenAI-compatible model answering per run, and Debian's Chromium driven by playwright-core.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createDuraClient, type DuraClient } from '@dura/client';
import {
  freePort,
  repoRoot,
  spawnTsEntry,
  startFakeLlmServer,
  startOtlpReceiver,
  useTestInfra,
  type FakeLlmReply,
  type FakeLlmServer,
  type ManagedProcess,
} from '@dura/testing';

export const CHROMIUM = process.env['DURA_CHROMIUM'] ?? '/usr/bin/chromium';
export const TOKENS = { operator: 'console-operator-token', reader: 'console-reader-token' } as const;
export const TRACES_URL = 'http://traces.example.test/trace/{traceId}';

export interface ConsoleStack {
  apiUrl: string;
  client: DuraClient;
  nc: NatsConnection;
  browser: Browser;
  /** Answers the model calls of the run whose input is `input`. */
  script: (input: string, reply: (calls: number) => FakeLlmReply) => void;
  /** A browser page signed in with `token`, at `path` of the console. */
  open: (token: string, path?: string) => Promise<{ page: Page; context: BrowserContext }>;
}

/**
 * An agent whose every `echo` call needs a human's approval (within an hour, else rejected), one that only
 * talks, and one that calls `echo` freely.
 */
function agentsFile(url: string) {
  const model = { provider: 'openai', model: 'fake-1', baseUrl: url, maxTokens: 100, maxAttempts: 2 };
  return {
    agents: [
      {
        name: 'cashier',
        version: '1',
        systemPrompt: 'You echo amounts; a human approves every echo.',
        model,
        tools: ['echo'],
        approvals: { tools: ['echo'], timeoutSeconds: 3600, onTimeout: 'reject' },
      },
      { name: 'talker', version: '1', systemPrompt: 'You answer in words.', model, tools: [] },
      {
        name: 'forecaster',
        version: '1',
        systemPrompt: 'You forecast the weather; look it up with echo first.',
        model,
        tools: ['echo'],
      },
    ],
  };
}

const SERVICE_READY = {
  planner: /planner started/,
  'tool-gateway': /tool gateway started/,
  projector: /projector api listening/,
} as const;

/**
 * Registers beforeAll/afterAll that start and stop the whole stack; the accessor works inside tests.
 * `plannerEnv`: more configuration for the planner (e.g. `DURA_MODEL_LIMITS`).
 */
export function useConsoleStack(options: { plannerEnv?: Record<string, string> } = {}): () => ConsoleStack {
  const infra = useTestInfra();
  let stack: ConsoleStack | undefined;
  const stops: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    // The console the projector serves is the one in dist/, built from the current sources.
    const built = spawnSync(
      process.execPath,
      [fileURLToPath(new URL('../scripts/ensure-built.mjs', import.meta.url))],
      {
        stdio: 'inherit',
      },
    );
    if (built.status !== 0) throw new Error('building the console failed; see the output above');
    const dir = await mkdtemp(join(tmpdir(), 'dura-console-'));
    stops.push(() => rm(dir, { recursive: true, force: true }));
    const scripts = new Map<string, (calls: number) => FakeLlmReply>();
    const calls = new Map<string, number>();
    const llm: FakeLlmServer = await startFakeLlmServer({
      provider: 'openai',
      respond: ({ body }) => {
        const input = (body as { messages: { role: string; content?: string }[] }).messages.find(
          (m) => m.role === 'user',
        )?.content;
        const script = scripts.get(input ?? '');
        if (!script)
          return { kind: 'status', status: 400, body: { error: { message: 'no script for this run' } } };
        const n = calls.get(input ?? '') ?? 0;
        calls.set(input ?? '', n + 1);
        return script(n);
      },
    });
    stops.push(() => llm.close());
    const agentsPath = join(dir, 'agents.json');
    await writeFile(agentsPath, JSON.stringify(agentsFile(llm.url)));
    const tokensPath = join(dir, 'tokens.json');
    await writeFile(
      tokensPath,
      JSON.stringify([
        {
          name: 'operator',
          token: TOKENS.operator,
          tenant: '*',
          scopes: ['read', 'signal', 'cancel', 'submit', 'schedule'],
        },
        { name: 'reader', token: TOKENS.reader, tenant: '*', scopes: ['read'] },
      ]),
    );
    // Traces are exported (to a local receiver), so events carry trace ids the console links to.
    const traces = await startOtlpReceiver();
    stops.push(() => traces.close());
    const { nats, db } = infra();
    const port = await freePort();
    const env = {
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: traces.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    };
    const start = async (name: keyof typeof SERVICE_READY, extra: Record<string, string>) => {
      const proc: ManagedProcess = spawnTsEntry({
        name,
        entry: `services/${name}/src/main.ts`,
        env: { ...env, ...extra },
      });
      stops.push(() => proc.kill());
      await proc.waitForOutput(SERVICE_READY[name], 90_000);
    };
    await start('planner', {
      // A module: the JSON agents above (CONSOLE_AGENTS_JSON) and a code agent.
      DURA_AGENTS: fileURLToPath(new URL('./fixtures/console-agents.ts', import.meta.url)),
      CONSOLE_AGENTS_JSON: agentsPath,
      DURA_INLINE_PLANS: 'true',
      ...options.plannerEnv,
    });
    await start('tool-gateway', {});
    await start('projector', {
      PROJECTOR_HTTP_PORT: String(port),
      PROJECTOR_API_TOKENS_FILE: tokensPath,
      PROJECTOR_CONSOLE_TRACES_URL: TRACES_URL,
    });
    const nc = await connect({ servers: nats.url });
    stops.push(() => nc.close());
    const apiUrl = `http://127.0.0.1:${port}`;
    const client = createDuraClient({
      js: jetstream(nc),
      jsm: await jetstreamManager(nc),
      apiUrl,
      apiToken: TOKENS.operator,
    });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    stops.push(() => browser.close());
    stack = {
      apiUrl,
      client,
      nc,
      browser,
      script: (input, reply) => scripts.set(input, reply),
      async open(token, path = '/ui/') {
        const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
        // The token goes where the sign-in form puts it: this tab's session storage.
        await context.addInitScript((t) => sessionStorage.setItem('dura.console.token', t), token);
        const page = await context.newPage();
        await page.goto(apiUrl + path);
        return { page, context };
      },
    };
  }, 240_000);
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }, 120_000);
  return () => {
    if (!stack) throw new Error('useConsoleStack(): only available inside tests, after beforeAll');
    return stack;
  };
}

/** Saves what `page` shows as docs/images/console-<name>.png (the docs' screenshots are taken by the tests). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const images = join(repoRoot(), 'docs', 'images');
  await mkdir(images, { recursive: true });
  await page.screenshot({ path: join(images, `console-${name}.png`) });
}

/** How long a browser test waits for the page to show something: sized for a machine 3x slower than ours. */
export const WAIT_MS = 60_000;

/** The run page's status badge (in the page header, not the time-travel view). */
export const statusOf = (page: Page, status: string) => page.locator(`.run-head [data-status="${status}"]`);

/** Waits until the run page shows `status`; on timeout the error quotes what the page shows instead. */
/**
 * Waits until the run page holds the run's events through its end (its `run_completed` row is drawn). The
 * status can show "completed" before the page's event list has caught up: a step picked meanwhile may name
 * the event the picker already stands at (the list's last), which changes nothing and selects nothing.
 */
export async function untilEventsToEnd(page: Page): Promise<void> {
  await page.locator('[data-type="run_completed"]').first().waitFor({ timeout: WAIT_MS });
}

export async function untilStatus(page: Page, status: string): Promise<void> {
  try {
    await statusOf(page, status).waitFor({ timeout: WAIT_MS });
  } catch (err) {
    const shown = await page
      .locator('main')
      .innerText()
      .catch(() => '(page closed)');
    throw new Error(
      `the run page did not show status "${status}" within ${WAIT_MS} ms; it shows:\n${shown}`,
      {
        cause: err,
      },
    );
  }
}
