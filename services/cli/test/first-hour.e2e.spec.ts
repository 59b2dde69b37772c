// The first hour of a new user, replayed: `npm run dev` as a child process, then every command of
// docs/first-hour.md with no --nats or --api flag (the CLI finds the stack through its state file), and what
// the page does not show: temp dirs cleaned up, the state file removed, OTEL_* and /metrics honoured, live
// tokens, and a NATS server without Dura's streams named as such.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevStateSchema, type DevState } from '@dura/client';
import { tokensSubject } from '@dura/contracts';
import { openNatsConnection } from '@dura/event-store';
import {
  eventually,
  freePort,
  repoRoot,
  spawnManaged,
  useTestInfra,
  type ManagedProcess,
} from '@dura/testing';
import { dura, type CliResult } from './system';
import { missingLines, parseTranscript, shellWords, type TranscriptStep } from './transcript';

const infra = useTestInfra({ database: false });
const stateFile = join(tmpdir(), `dura-first-hour-${process.pid}.json`);
const env = { DURA_DEV_STATE_FILE: stateFile };
const page = readFileSync(join(repoRoot(), 'docs/first-hour.md'), 'utf8');
const timings: { command: string; ms: number; code: number | null; output: string }[] = [];
let dev: ManagedProcess;
let state: DevState;
let natsPort: number;
let devStartMs: number;

beforeAll(async () => {
  natsPort = await freePort();
  const started = Date.now();
  dev = spawnManaged({
    name: 'npm run dev',
    command: 'npm',
    args: ['run', 'dev'],
    cwd: repoRoot(),
    env: {
      ...env,
      NATS_URL: undefined,
      DATABASE_URL: undefined,
      DURA_API_URL: undefined,
      DURA_DEV_NATS_PORT: String(natsPort),
      PROJECTOR_HTTP_PORT: String(await freePort()),
      OTEL_TRACES_EXPORTER: 'console',
    },
  });
  await dev.waitForOutput(/^Running\./m, 180_000);
  devStartMs = Date.now() - started;
  state = DevStateSchema.parse(JSON.parse(readFileSync(stateFile, 'utf8')));
}, 240_000);

/** Ctrl-C in a terminal reaches the whole process group; npm's `sh -c` does not pass on a signal sent to npm. */
function ctrlC(): void {
  try {
    if (state) process.kill(state.pid, 'SIGINT');
  } catch {
    // already gone
  }
}

afterAll(async () => {
  ctrlC();
  await dev?.kill('SIGINT');
  const record = process.env.DURA_TRANSCRIPT_RECORD;
  if (record) writeFileSync(record, JSON.stringify({ devStartMs, dev: dev?.output(), timings }, null, 2));
});

/** Runs one transcript command the way a user's shell would, and how long it took. */
async function perform(step: TranscriptStep): Promise<CliResult> {
  const words = shellWords(step.command);
  const started = Date.now();
  let result: CliResult;
  if (words[0] === 'npm' && words[1] === 'run' && words[2] === 'dura' && words[3] === '--') {
    result = await dura(words.slice(4), { env });
  } else if (words[0] === 'curl') {
    const method = words[words.indexOf('-X') + 1] ?? 'GET';
    const url = (words.find((w) => w.startsWith('http://')) ?? '').replace(/^http:\/\/[^/]+/, state.apiUrl);
    const headers = words
      .flatMap((word, i) => (words[i - 1] === '-H' ? [word.split(/:\s*/, 2)] : []))
      .map(([name = '', value = '']) => [name, value] as [string, string]);
    const response = await fetch(url, { method, headers });
    result = { code: 0, output: `${await response.text()} HTTP ${response.status}\n` };
  } else throw new Error(`docs/first-hour.md: no way to run "${step.command}" in the test`);
  timings.push({ command: step.command, ms: Date.now() - started, code: result.code, output: result.output });
  return result;
}

/** A GET with this Host header (fetch sends the URL's own), as a page on a rebound name would send it: the raw answer. */
function rawGet(url: string, host: string): Promise<string> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.end(`GET ${pathname} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
    );
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.once('end', () => resolve(answer));
    socket.once('error', reject);
  });
}

/** Read-only commands are retried until the page's output shows (the run may still be getting there). */
const READ_ONLY = /^npm run dura -- (get|ls|events|why)\b/;

describe('docs/first-hour.md, replayed against `npm run dev`', () => {
  const steps = parseTranscript(page);

  it('has a transcript that starts with npm run dev and uses no --nats or --api flag', () => {
    expect(steps[0]?.command).toBe('npm run dev');
    expect(steps.length).toBeGreaterThan(10);
    for (const step of steps) expect(step.command).not.toMatch(/--nats|--api/);
  });

  it('npm run dev prints its progress, where it listens, the demo run and its next steps', () => {
    const output = dev.output();
    expect(missingLines(steps[0]!.expected, output)).toEqual([]);
    expect(state.natsUrl).toBe(`nats://127.0.0.1:${natsPort}`);
    expect(state.consoleUrl).toBe(`${state.apiUrl}/ui/`);
  });

  it.each(steps.slice(1).map((step, i) => [i + 2, step.command, step] as const))(
    'step %i: %s',
    async (_, command, step) => {
      const check = async () => {
        const result = await perform(step);
        const missing = missingLines(step.expected, result.output);
        return missing.length === 0 && result.code === step.exitCode ? result : { ...result, missing };
      };
      if (READ_ONLY.test(command)) {
        await eventually(
          async () => {
            const result = await check();
            return 'missing' in result ? undefined : result;
          },
          `the output of "${command}" to match docs/first-hour.md`,
          60_000,
        );
        return;
      }
      const result = await check();
      expect('missing' in result ? result.missing : [], result.output).toEqual([]);
      expect(result.code, result.output).toBe(step.exitCode);
    },
    90_000,
  );
});

describe('the dev stack beyond the page', () => {
  it('serves /metrics on the API port, with the runs it drove counted', async () => {
    const text = await (await fetch(`${state.apiUrl}/metrics`)).text();
    expect(text).toMatch(/^dura_\w+/m);
  });

  it('refuses what a web page can send it: a text/plain POST (415, nothing started), another Origin or Host (403)', async () => {
    const notify = JSON.stringify({
      runId: 'page-notify',
      agent: { kind: 'scripted', steps: [{ tool: 'demo.notify', args: { message: 'from a page' } }] },
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${state.apiUrl}/runs`, { method: 'POST', headers, body: notify });
    const plain = await post({ 'content-type': 'text/plain' });
    expect([plain.status, await plain.text()]).toEqual([
      415,
      expect.stringContaining('unsupported_media_type'),
    ]);
    const crossSite = await post({ 'content-type': 'application/json', origin: 'https://evil.example' });
    expect([crossSite.status, await crossSite.text()]).toEqual([
      403,
      expect.stringContaining('origin_forbidden'),
    ]);
    const rebound = await rawGet(`${state.apiUrl}/runs`, 'evil.example');
    expect(rebound).toMatch(/^HTTP\/1\.1 403 [\s\S]*host_forbidden/);
    // The intake is in order: once a later run is done, a refused one would have started before it.
    const later = await dura(['run', '--tool', 'echo', '--args', '{"after":"page"}', '--id', 'after-page'], {
      env,
    });
    expect(later.code, later.output).toBe(0);
    const get = await dura(['get', 'page-notify'], { env });
    expect(get.code, get.output).not.toBe(0);
    expect(get.output).toMatch(/page-notify/);
  });

  it('honours OTEL_TRACES_EXPORTER=console with one line per span', () => {
    const spans = dev
      .output()
      .split('\n')
      .filter((line) => line.startsWith('span '));
    expect(spans.length).toBeGreaterThan(0);
    for (const line of spans.slice(0, 20))
      expect(line).toMatch(/^span \S.* \d+\.\dms trace=[0-9a-f]{32} span=[0-9a-f]{16}/);
    expect(dev.output()).not.toMatch(/^\{\s*$/m);
  });

  it('dura watch --live streams the text of a model call as it answers, and says when an attempt is dropped', async () => {
    const submit = await dura(['run', 'examples/agents/wait-for-reply.json', '--id', 'live-1', '--detach'], {
      env,
    });
    expect(submit.code, submit.output).toBe(0);
    const watch = dura.spawn(['watch', 'live-1', '--live'], env);
    await watch.waitForOutput(/wait_requested/, 60_000);
    // The wait is still open when the watch reaches it: it says what resolves it.
    await watch.waitForOutput(
      /next: run live-1 waits for the signal reply .*: dura signal live-1 reply --payload/,
      30_000,
    );
    const nc = await openNatsConnection({ url: state.natsUrl, name: 'first-hour-live' });
    try {
      // The run's next decision (its second thought) streams; a first attempt is dropped for a second one.
      // (A plain publish on the stream's subject is stored as the planner's would be.)
      const token = (attempt: string, n: number, delta: string) =>
        nc.publish(
          tokensSubject('live-1'),
          JSON.stringify({ runId: 'live-1', decision: 1, call: 0, attempt, n, delta }),
        );
      token('first', 0, 'Ship it la');
      await nc.flush();
      await watch.waitForOutput(/… Ship it la/, 30_000);
      ['Ship', ' it', ' now.'].forEach((delta, n) => token('second', n, delta));
      await nc.flush();
      await watch.waitForOutput(
        /the text above is dropped: the model was asked again\)\n\s+… Ship it now\./,
        30_000,
      );
    } finally {
      await nc.close();
    }
    const signal = await dura(['signal', 'live-1', 'reply', '--payload', '{"text":"ok"}'], { env });
    expect(signal.code, signal.output).toBe(0);
    const exit = await watch.closed;
    expect(exit.code, watch.output()).toBe(0);
  });

  it('a NATS server without Dura streams is named as such, with where its URL came from (exit 4)', async () => {
    const result = await dura(['get', 'release-1'], { env: { ...env, NATS_URL: infra().nats.url } });
    expect(result.output).toMatch(/this NATS server has no Dura streams/);
    expect(result.output).toContain(`NATS ${infra().nats.url} came from $NATS_URL`);
    expect(result.code).toBe(4);
  });

  it('Ctrl-C stops everything: the state file and the nats-server temp dir are gone', async () => {
    const store = /nats-server ready at \S+ \(store (\S+)\)/.exec(dev.output())?.[1];
    expect(store, dev.output()).toMatch(/dura-dev-nats-/);
    expect(existsSync(store!)).toBe(true);
    ctrlC();
    expect((await dev.closed).code, dev.output()).toBe(0);
    await eventually(
      () => Promise.resolve(!existsSync(store!) && !existsSync(stateFile) ? true : undefined),
      'the temp dir and the state file to be removed',
      30_000,
    );
  });
});
