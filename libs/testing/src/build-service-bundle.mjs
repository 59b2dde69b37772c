// Builds one service bundle for service-bundle.ts (a separate process: esbuild's plugins need its async API,
// and a test starts its services synchronously).
//   node build-service-bundle.mjs <repo root> <entry.ts> <bundle dir>
// Writes <bundle dir>/<build>/main.mjs (+ chunks), then <bundle dir>/current.json naming it.
/* global process */
import { readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Packages that stay imports: those that find files of their own by path at run time (pino's worker files,
 * PGlite's WebAssembly and data, gRPC's protos), yaml (CommonJS without an ES mark), and build or test tools.
 */
const EXTERNAL =
  /^(pino|thread-stream|sonic-boom|yaml|tsx|esbuild|playwright-core|testcontainers|dockerode|ssh2|cpu-features|@electric-sql\/[^/]+|@grpc\/[^/]+|@testcontainers\/[^/]+)(\/|$)/;
/** Old builds are removed once no process started from them can still be loading a chunk. */
const OLD_BUILD_MS = 30 * 60_000;

const [root, entry, dir] = process.argv.slice(2);
if (!root || !entry || !dir) {
  process.stderr.write('usage: node build-service-bundle.mjs <repo root> <entry.ts> <bundle dir>\n');
  process.exit(2);
}

const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: EXTERNAL }, (args) => ({ path: args.path, external: true }));
  },
};

/** A workspace source keeps its own `import.meta.url`, as if it ran where it lies (migrations, console build). */
const sourceUrls = {
  name: 'source-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.(ts|tsx|mts|js|mjs)$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const contents = readFileSync(args.path, 'utf8');
      if (!contents.includes('import.meta.url')) return undefined;
      const loader = args.path.endsWith('.tsx') ? 'tsx' : /\.m?ts$/.test(args.path) ? 'ts' : 'js';
      const url = JSON.stringify(pathToFileURL(args.path).href);
      return { contents: contents.replaceAll('import.meta.url', url), loader };
    });
  },
};

const esbuild = createRequire(join(root, 'package.json'))('esbuild');
const build = `${Date.now()}-${process.pid}`;
const startedAt = Date.now();
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { main: entry },
  outdir: join(dir, build),
  outExtension: { '.js': '.mjs' },
  bundle: true,
  // No chunks: a split chunk gives a CommonJS package's dynamic import() only a default export.
  splitting: false,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  metafile: true,
  logLevel: 'error',
  banner: {
    js: [
      `// Built by libs/testing/src/build-service-bundle.mjs from ${relative(root, entry)}; do not edit.`,
      "import { createRequire as __duraCreateRequire } from 'node:module';",
      'const require = __duraCreateRequire(import.meta.url);',
    ].join('\n'),
  },
  plugins: [externalPackages, sourceUrls],
});
const inputs = Object.keys(result.metafile.inputs).filter((input) => !input.includes('node_modules/'));
const temp = join(dir, `.current-${build}.json`);
writeFileSync(temp, JSON.stringify({ build, startedAt, inputs }) + '\n');
renameSync(temp, join(dir, 'current.json'));
for (const old of readdirSync(dir)) {
  if (old === build || old === 'current.json') continue;
  const path = join(dir, old);
  if (Date.now() - statSync(path).mtimeMs > OLD_BUILD_MS) rmSync(path, { recursive: true, force: true });
}
