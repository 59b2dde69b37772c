/**
 * Service processes that tests start, as one prebuilt JavaScript file each instead of a TypeScript entry
 * loaded through tsx: a planner started through tsx spends ~2 s of CPU resolving, transforming and loading
 * ~1,000 modules before its first line runs; from a bundle it spends ~0.5 s. Suites that start and SIGKILL
 * services hundreds of times spend most of their CPU there, and on a loaded 2-core machine that start-up time
 * is what makes a crash test slow. The code that runs is the same: esbuild bundles the entry's sources and
 * packages (only packages that find files by path at run time stay imports), and a module's `import.meta.url`
 * keeps naming its source file, so migrations, the console's build and other files next to the sources are
 * found where they are.
 *
 * A process that loads TypeScript of its own at run time (code agents, tool modules: a DURA_* variable naming
 * a .ts file, or an argument naming one) is started through tsx as before (a bundle with tsx loaded for a few modules measured slower).
 * A bundled process that still tries to load TypeScript fails at once, naming the file (bundle-guard.mjs).
 *
 * Bundles are built on first use into node_modules/.cache/dura-test-bundles under the entry's package and
 * rebuilt when a source they were built from changed. DURA_TEST_BUNDLES=0 turns bundling off. A bundled process
 * keeps Node's compile cache next to its build (spawn-ts-entry.ts), so only a build's first start compiles it.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from './repo-root';

/** An env value that names a TypeScript file: the process loads TypeScript at run time. */
const TYPESCRIPT_PATH = /\.(c|m)?tsx?(?=$|[,;:\s])/;

interface BuildRecord {
  build: string;
  startedAt: number;
  /** Sources the bundle was built from, relative to the repository root. */
  inputs: string[];
}

export const BUNDLE_GUARD = fileURLToPath(new URL('./bundle-guard.mjs', import.meta.url));

/**
 * Whether a process with this env and these arguments loads TypeScript at run time (and so needs tsx): a
 * DURA_* variable or an argument naming a .ts file (`dura replay --agents agents.ts`).
 */
export function loadsTypeScript(
  env: Record<string, string | undefined>,
  args: readonly string[] = [],
): boolean {
  return (
    args.some((arg) => TYPESCRIPT_PATH.test(arg)) ||
    Object.entries(env).some(
      ([key, value]) => key.startsWith('DURA_') && value !== undefined && TYPESCRIPT_PATH.test(value),
    )
  );
}

function packageDir(entry: string): string {
  let dir = dirname(entry);
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) return repoRoot();
    dir = up;
  }
  return dir;
}

function readRecord(file: string): BuildRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as BuildRecord;
    return typeof record.build === 'string' && Array.isArray(record.inputs) ? record : undefined;
  } catch {
    return undefined;
  }
}

function isFresh(record: BuildRecord, dir: string): boolean {
  if (!existsSync(join(dir, record.build, 'main.mjs'))) return false;
  const root = repoRoot();
  for (const input of record.inputs) {
    const mtime = statSync(join(root, input), { throwIfNoEntry: false })?.mtimeMs;
    if (mtime === undefined || mtime > record.startedAt) return false;
  }
  return true;
}

const BUILDER = fileURLToPath(new URL('./build-service-bundle.mjs', import.meta.url));

function build(entry: string, dir: string): BuildRecord {
  const run = spawnSync(process.execPath, [BUILDER, repoRoot(), entry, dir], { encoding: 'utf8' });
  const record = run.status === 0 ? readRecord(join(dir, 'current.json')) : undefined;
  if (!record)
    throw new Error(
      `could not bundle ${entry} for a test (exit ${run.status}): ${run.stderr || run.error?.message || 'no output'}` +
        '; fix the build error, or set DURA_TEST_BUNDLES=0 to start services through tsx',
    );
  return record;
}

const fresh = new Map<string, string>();

/**
 * The bundle of a TypeScript entry point (built or rebuilt when needed), or undefined when bundling is off.
 * Throws when esbuild cannot build it, with esbuild's errors.
 */
export function bundledEntry(entry: string): string | undefined {
  if (process.env['DURA_TEST_BUNDLES'] === '0') return undefined;
  const known = fresh.get(entry);
  if (known) return known;
  const key = createHash('sha256').update(entry).digest('hex').slice(0, 12);
  const dir = join(
    packageDir(entry),
    'node_modules',
    '.cache',
    'dura-test-bundles',
    `${basename(entry).replace(/\.[^.]+$/, '')}-${key}`,
  );
  mkdirSync(dir, { recursive: true });
  const current = readRecord(join(dir, 'current.json'));
  const record = current && isFresh(current, dir) ? current : build(entry, dir);
  const main = join(dir, record.build, 'main.mjs');
  fresh.set(entry, main);
  return main;
}
