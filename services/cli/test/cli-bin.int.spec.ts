// The `dura` bin runs built JavaScript: `npm install` builds services/cli/dist, and neither the bin nor what it
// loads is tsx or a TypeScript file (that is what made each command take seconds). No timings are asserted here:
// `npm run bench -- cli` measures them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@dura/testing';

const root = repoRoot();
const bin = join(root, 'services', 'cli', 'bin', 'dura.mjs');
const dist = join(root, 'services', 'cli', 'dist');
const scratch = mkdtempSync(join(tmpdir(), 'dura-cli-bin-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Records every module URL Node loads (in this process and any node it spawns) into `log`. */
function loadRecorder(log: string): string {
  const code = [
    "import { registerHooks } from 'node:module';",
    "import { appendFileSync } from 'node:fs';",
    'registerHooks({ load(url, context, next) {',
    `  appendFileSync(${JSON.stringify(log)}, url + '\\n');`,
    '  return next(url, context);',
    '} });',
  ].join('\n');
  return `--import=data:text/javascript,${encodeURIComponent(code)}`;
}

function run(args: string[], log: string) {
  const result = spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: loadRecorder(log) },
  });
  const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { ...result, loaded };
}

const NATS_OR_OTEL = /^@(nats-io|opentelemetry)\//;

/** The npm packages bundled into the dist files among `loaded` (esbuild heads each module with its path). */
function bundledPackages(loaded: readonly string[]): string[] {
  const names = new Set<string>();
  for (const url of loaded) {
    if (!url.startsWith(`file://${dist}/`)) continue;
    const text = readFileSync(new URL(url), 'utf8');
    for (const match of text.matchAll(/^\/\/ node_modules\/((?:@[^/\s]+\/)?[^/\s]+)/gm)) names.add(match[1]!);
  }
  return [...names].sort();
}

describe('the dura bin', () => {
  it('is the package bin, is what npm run dura runs, and npm install builds what it runs', () => {
    const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const cliPackage = JSON.parse(readFileSync(join(root, 'services', 'cli', 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };

    expect(cliPackage.bin).toEqual({ dura: './bin/dura.mjs' });
    // `npx dura` from the repository: the workspace links the bin into node_modules/.bin.
    expect(realpathSync(join(root, 'node_modules', '.bin', 'dura'))).toBe(realpathSync(bin));
    expect(rootPackage.scripts['dura']).toBe('node services/cli/bin/dura.mjs');
    expect(rootPackage.scripts['postinstall']).toContain('node services/cli/scripts/build.mjs');
    expect(readdirSync(dist)).toEqual(expect.arrayContaining(['dura.mjs', 'build.json']));
  });

  it('runs --help from the built JavaScript: no tsx and no TypeScript file is loaded', () => {
    const log = join(scratch, 'help.log');
    const { status, stdout, loaded } = run([bin, '--help'], log);

    expect(stdout).toMatch(/^dura: submit, follow and inspect Dura runs\./m);
    expect(stdout).toMatch(/^ {2}run +\S/m);
    expect(status).toBe(0);
    expect(loaded).toContain(`file://${join(dist, 'dura.mjs')}`);
    expect(loaded.filter((url) => /\/tsx\/|\.[cm]?ts$/.test(url))).toEqual([]);
  });

  it('passes a command exit code through, still without tsx', () => {
    const log = join(scratch, 'usage.log');
    const { status, stderr, loaded } = run([bin, 'get'], log);

    expect(stderr).toMatch(/dura get takes 1 argument, got 0/);
    expect(status).toBe(2);
    expect(loaded.filter((url) => /\/tsx\/|\.[cm]?ts$/.test(url))).toEqual([]);
  });

  it('loads what a command imports when it runs: yaml for a request file', () => {
    const request = join(scratch, 'request.yaml');
    writeFileSync(request, 'agent: scripted\ninput: {}\n');
    const { status, stderr } = run([bin, 'run', request, '--detach'], join(scratch, 'yaml.log'));

    // Parsed: what the request says is checked (and refused), not the YAML.
    expect(stderr).not.toMatch(/not valid YAML/);
    expect(stderr).toMatch(/run request is invalid/);
    expect(stderr).toMatch(/agent: Invalid input: expected object, received string/);
    expect(status).toBe(2);
  });

  // What a command loads is what its start-up costs: parsing and compiling code. Help and usage errors load no
  // package at all, and a read-API command loads neither NATS nor OpenTelemetry (they load with the first NATS
  // call). Read from the built chunks' module comments, so it holds for the files users run.
  it('dura --help loads no package; dura ls loads neither NATS nor OpenTelemetry', () => {
    const help = run([bin, '--help'], join(scratch, 'lazy-help.log'));
    const getHelp = run([bin, 'get', '--help'], join(scratch, 'lazy-get-help.log'));
    const ls = run([bin, 'ls', '--api', 'http://127.0.0.1:1'], join(scratch, 'lazy-ls.log'));

    expect(help.status).toBe(0);
    expect(getHelp.status).toBe(0);
    expect(ls.stderr).toMatch(/cannot reach the Dura read API at http:\/\/127\.0\.0\.1:1/);
    expect(ls.status).toBe(4);
    expect(bundledPackages(help.loaded)).toEqual([]);
    expect(bundledPackages(getHelp.loaded)).not.toEqual(expect.arrayContaining([expect.stringMatching(NATS_OR_OTEL)]));
    const lsPackages = bundledPackages(ls.loaded);
    expect(lsPackages).toContain('zod'); // the read API's answers are checked
    expect(lsPackages.filter((name) => NATS_OR_OTEL.test(name))).toEqual([]);
  });

  it('the built files import no tsx', () => {
    const files = readdirSync(dist).filter((name) => name.endsWith('.mjs'));
    expect(files).toContain('dura.mjs');
    for (const file of files)
      expect(readFileSync(join(dist, file), 'utf8')).not.toMatch(
        /(from\s*|import\s*\(\s*)["']tsx(\/[^"']*)?["']/,
      );
    expect(readFileSync(bin, 'utf8')).toMatch(/import\('\.\.\/dist\/dura\.mjs'\)/);
  });
});
