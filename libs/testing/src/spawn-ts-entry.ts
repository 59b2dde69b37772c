import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { spawnManaged, type ManagedProcess } from './managed-process';
import { repoRoot } from './repo-root';
import { BUNDLE_GUARD, bundledEntry, loadsTypeScript } from './service-bundle';

const BUNDLE_GUARD_URL = pathToFileURL(BUNDLE_GUARD).href;

export interface SpawnTsEntryOptions {
  name: string;
  /** Absolute path, or a path relative to the repo root. */
  entry: string;
  env?: Record<string, string | undefined>;
  args?: string[];
  /** Options for node itself, before the entry (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
}

function tsxLoaderUrl(): string {
  // `--import tsx` would be resolved from the child's cwd; an absolute URL works from anywhere.
  const require = createRequire(join(repoRoot(), 'package.json'));
  return pathToFileURL(require.resolve('tsx')).href;
}

/**
 * Node's compile cache next to a bundle, unless NODE_COMPILE_CACHE says where one is: compiling a bundle's
 * several megabytes is about a quarter of a bundled service's start-up CPU, and every start after the first of
 * a build reads the compiled code back instead (the cache is keyed by the source, so a rebuild compiles anew).
 */
function compileCacheEnv(bundle: string): Record<string, string> {
  return process.env['NODE_COMPILE_CACHE']
    ? {}
    : { NODE_COMPILE_CACHE: join(dirname(bundle), 'compile-cache') };
}

/**
 * Spawns a TypeScript entry point from its bundle (service-bundle.ts) when the process loads no TypeScript of
 * its own at run time, else with tsx (`node --import tsx <entry>`, tsx resolved from the repo): a bundle run
 * with tsx loaded for a few modules spends more CPU than the sources through tsx.
 */
export function spawnTsEntry(opts: SpawnTsEntryOptions): ManagedProcess {
  const root = repoRoot();
  const entry = isAbsolute(opts.entry) ? opts.entry : resolve(root, opts.entry);
  const bundle = loadsTypeScript({ ...process.env, ...opts.env }, opts.args)
    ? undefined
    : bundledEntry(entry);
  const start = bundle ? ['--import', BUNDLE_GUARD_URL, bundle] : ['--import', tsxLoaderUrl(), entry];
  const env = bundle ? { ...compileCacheEnv(bundle), ...opts.env } : opts.env;
  return spawnManaged({
    name: opts.name,
    command: process.execPath,
    args: [...(opts.nodeArgs ?? []), ...start, ...(opts.args ?? [])],
    cwd: root,
    ...(env ? { env } : {}),
  });
}

export interface TsEntryResult {
  code: number | null;
  /** stdout and stderr together, all of it. */
  output: string;
}

/**
 * Runs a TypeScript entry point to its end (a CLI command, say) and returns its exit code and whole output;
 * a process still running after `timeoutMs` is killed and the call fails with its output.
 */
export async function runTsEntry(opts: SpawnTsEntryOptions & { timeoutMs?: number }): Promise<TsEntryResult> {
  const proc = spawnTsEntry(opts);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const end = await Promise.race([proc.closed, sleep(timeoutMs, 'timeout' as const, { ref: false })]);
  if (end === 'timeout') {
    await proc.kill('SIGKILL');
    const command = [opts.entry, ...(opts.args ?? [])].join(' ');
    throw new Error(`${command} did not exit within ${timeoutMs} ms. Output:\n${proc.output()}`);
  }
  return { code: end.code, output: proc.output() };
}
