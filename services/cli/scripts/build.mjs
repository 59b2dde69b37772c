// Builds the `dura` command into one JavaScript file, dist/dura.mjs, so it starts in plain Node (no tsx, no
// type-stripping at run time). The workspace packages (@dura/*) are bundled in; packages from node_modules
// stay imports. Run by the root postinstall and, when sources changed, by bin/dura.mjs itself.
//   node services/cli/scripts/build.mjs [--force]    (prints nothing when dist/ is up to date)
// Plain JavaScript that runs on Node 20, so `npm install` works on the Node a user starts with.
/* global process, console */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_INFO, OUTPUT, staleReason } from './freshness.mjs';

const cliRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = join(cliRoot, '..', '..');

/**
 * Packages that stay imports, resolved from node_modules at run time: pino finds its worker files by path, and
 * yaml is CommonJS without an __esModule mark, so only Node's own loader gives `await import('yaml')` its named
 * exports. Everything else (zod, nats.js, OpenTelemetry's API, the MCP SDK) is bundled: Node then reads a few
 * files instead of ~300 modules, which is most of the start-up time. The @dura/* workspace packages are bundled.
 */
const EXTERNAL = /^(pino|thread-stream|sonic-boom|yaml|tsx|esbuild)(\/|$)/;

const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: EXTERNAL }, (args) => ({ path: args.path, external: true }));
  },
};

/** Chunks of earlier builds, once no `dura` started before this build can still be loading them. */
function removeOldChunks(dist, current) {
  for (const name of readdirSync(dist)) {
    if (!/^chunk-.*\.mjs$/.test(name) || current.has(name)) continue;
    const path = join(dist, name);
    if (Date.now() - statSync(path).mtimeMs > 60_000) rmSync(path, { force: true });
  }
}

/** Builds dist/dura.mjs; resolves to true when it built, false when esbuild is missing (production install). */
export async function buildCli({ quiet = false } = {}) {
  let esbuild;
  try {
    esbuild = await import(createRequire(join(cliRoot, 'package.json')).resolve('esbuild'));
  } catch {
    return false;
  }
  const dist = join(cliRoot, 'dist');
  // Built into a fresh folder, then moved in: chunks first, the entry file last, so a `dura` starting meanwhile
  // reads either the old build or the new one, never half a file.
  const unique = `${process.pid}-${Date.now()}`;
  const staging = join(dist, `.staging-${unique}`);
  mkdirSync(staging, { recursive: true });
  const startedAt = Date.now();
  try {
    const result = await esbuild.build({
      absWorkingDir: repoRoot,
      entryPoints: { dura: join(cliRoot, 'src', 'main.ts') },
      outdir: staging,
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunk-[hash]',
      bundle: true,
      splitting: true, // a command's heavy modules (MCP SDK, the planner's code) load when it runs
      format: 'esm',
      platform: 'node',
      target: 'node20',
      metafile: true,
      logLevel: quiet ? 'error' : 'warning',
      // Bundled CommonJS packages (the MCP SDK's ajv) call require(): give them Node's.
      banner: {
        js: [
          '// Built by services/cli/scripts/build.mjs from services/cli/src; do not edit.',
          "import { createRequire as __duraCreateRequire } from 'node:module';",
          'const require = __duraCreateRequire(import.meta.url);',
        ].join('\n'),
      },
      plugins: [externalPackages],
    });
    const files = readdirSync(staging);
    for (const file of files.filter((name) => name !== 'dura.mjs'))
      renameSync(join(staging, file), join(dist, file));
    renameSync(join(staging, 'dura.mjs'), OUTPUT);
    // The sources it was built from (paths from the repository root), for the staleness check in freshness.mjs.
    // node_modules is left out: `npm install` rebuilds (postinstall), so only workspace edits need checking.
    const inputs = Object.keys(result.metafile.inputs).filter((input) => !input.includes('node_modules/'));
    const infoTemp = join(dist, `.build-${unique}.json`);
    writeFileSync(infoTemp, JSON.stringify({ startedAt, inputs, files }) + '\n');
    renameSync(infoTemp, BUILD_INFO);
    removeOldChunks(dist, new Set(files));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const force = process.argv.includes('--force');
  const reason = force ? 'forced' : staleReason();
  if (reason === undefined) process.exit(0);
  try {
    if (await buildCli()) {
      console.log(`cli: built ${relative(repoRoot, OUTPUT)} (${reason})`);
    } else if (!existsSync(OUTPUT)) {
      // A production install (--omit=dev) has no esbuild: the image runs the services, not this CLI.
      console.warn('cli: esbuild is not installed (production install?); not building the dura command');
    }
  } catch (err) {
    console.error(
      `cli: the build failed (${err instanceof Error ? err.message : String(err)}); fix the errors above, ` +
        'then run "node services/cli/scripts/build.mjs --force"',
    );
    process.exit(1);
  }
}
