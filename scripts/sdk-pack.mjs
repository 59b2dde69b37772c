#!/usr/bin/env node
// Builds the packages a project outside this repository depends on to write tools and code agents and to
// submit and follow runs (the SDK) and packs each into an npm tarball: JavaScript and .d.ts from
// `tsc -p tsconfig.build.json`, and a manifest whose `exports` point at the build, whose Dura dependencies are
// versions (not workspace links), and with zod and @opentelemetry/api as peers so the project and the SDK
// share one copy. Inside the monorepo the packages keep pointing at
// their TypeScript sources; only the packed copy changes.
//
// Usage: node scripts/sdk-pack.mjs [--out DIR]   (default dist/sdk; `npm run sdk:pack`)
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The SDK, in build order: each package's Dura dependencies come before it. */
export const SDK_PACKAGES = [
  'libs/contracts',
  'libs/core',
  'libs/tools',
  'libs/code-agents',
  'libs/ai-sdk',
  'libs/openai-agents',
  'libs/telemetry',
  'libs/event-store',
  'libs/client',
];

/**
 * Dependencies the project provides itself (one copy shared with its own code), not installed per package:
 * zod's schemas and OpenTelemetry's global tracer provider must be the project's own.
 */
export const PEER_DEPENDENCIES = ['zod', '@opentelemetry/api'];

/** Export entries that stay inside the monorepo (test helpers with development-only dependencies). */
const INTERNAL_EXPORTS = ['./testing'];

const log = (line) => process.stdout.write(`sdk: ${line}\n`);

/**
 * The source file an export entry names: a path string, or conditions (`types`, `import`, `default`) that all
 * name the same source file.
 */
function exportSource(name, key, target) {
  if (typeof target === 'string') return target;
  const paths = target && typeof target === 'object' ? [...new Set(Object.values(target))] : [];
  if (paths.length !== 1 || typeof paths[0] !== 'string')
    throw new Error(
      `${name}: export ${key} must be a path string or conditions that all name one file, got ${JSON.stringify(target)}`,
    );
  return paths[0];
}

/** A peer's range: an exact version in the monorepo becomes `^version`, so the project's own copy may differ in minor. */
const peerRange = (range) => (/^\d/.test(range) ? `^${range}` : range);

/** `./src/x.ts` → `./dist/x.js` (ext `.js`) or `./dist/x.d.ts` (ext `.d.ts`). */
function built(target, ext) {
  const match = /^\.\/src\/(.+)\.ts$/.exec(target);
  if (!match)
    throw new Error(`export target ${target} is not a ./src/*.ts file; the SDK build cannot map it`);
  return `./dist/${match[1]}${ext}`;
}

/**
 * The manifest of the packed package: its exports at the build, Dura dependencies pinned to the versions
 * packed beside it, peers split off, and everything only the monorepo uses (scripts, nx, devDependencies) dropped.
 */
export function publishedManifest(pkg, versions) {
  const exports = {};
  for (const [key, target] of Object.entries(pkg.exports ?? { '.': './src/index.ts' })) {
    if (INTERNAL_EXPORTS.includes(key) || key === './package.json') continue;
    const source = exportSource(pkg.name, key, target);
    exports[key] = { types: built(source, '.d.ts'), default: built(source, '.js') };
  }
  exports['./package.json'] = './package.json';
  const dependencies = {};
  const peerDependencies = {};
  for (const [name, range] of Object.entries(pkg.dependencies ?? {})) {
    if (name.startsWith('@dura/')) {
      const version = versions.get(name);
      if (!version)
        throw new Error(`${pkg.name} depends on ${name}, which is not in the SDK; add it to SDK_PACKAGES`);
      dependencies[name] = version;
    } else if (PEER_DEPENDENCIES.includes(name)) peerDependencies[name] = peerRange(range);
    else dependencies[name] = range;
  }
  // The framework an adapter package plugs into (the AI SDK, the Agents SDK) is the project's own copy.
  for (const [name, range] of Object.entries(pkg.peerDependencies ?? {}))
    peerDependencies[name] = peerRange(range);
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return {
    name: pkg.name,
    version: pkg.version,
    ...(pkg.description ? { description: pkg.description } : {}),
    type: 'module',
    engines: root.engines,
    main: exports['.'].default,
    types: exports['.'].types,
    exports,
    files: ['dist', 'README.md'],
    dependencies,
    ...(Object.keys(peerDependencies).length > 0 ? { peerDependencies } : {}),
    publishConfig: { access: 'public' },
  };
}

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const RELATIVE_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?(?:\/[^'"]*)?)\2/g;

/**
 * Adds the extension Node's ESM resolution needs to every relative specifier of an emitted file (the sources
 * import `./tool`, resolved by the bundler-style resolution of the monorepo): `./tool.js` or `./dir/index.js`.
 */
export function withExtensions(text, file) {
  const ext = file.endsWith('.d.ts') ? '.d.ts' : '.js';
  return text.replace(RELATIVE_SPECIFIER, (whole, lead, quote, spec) => {
    if (/\.(m?js|json)$/.test(spec)) return whole;
    const base = resolve(dirname(file), spec);
    if (!spec.endsWith('/') && existsSync(base + ext)) return `${lead}${quote}${spec}.js${quote}`;
    if (existsSync(join(base, `index${ext}`)))
      return `${lead}${quote}${spec.replace(/\/$/, '')}/index.js${quote}`;
    throw new Error(`${file}: cannot resolve the import ${spec} in the build output`);
  });
}

/** `import("libs/contracts/dist/ids").JsonObject`: a type tsc named by the monorepo's path of another package. */
const MONOREPO_TYPE_IMPORT = /import\((["'])libs\/([a-z0-9-]+)\/dist\/[^"']+\1\)\.([A-Za-z_$][\w$]*)/g;

/**
 * Names every type tsc referenced by another SDK package's build path (`libs/contracts/dist/ids`, which only
 * exists in the monorepo) by that package instead (`@dura/contracts`). The type must be exported from the
 * package's entry point; when it is not, the build stops and says which type to export.
 */
export function withPackageTypeImports(text, file) {
  if (!file.endsWith('.d.ts')) return text;
  return text.replace(MONOREPO_TYPE_IMPORT, (whole, quote, lib, name) => {
    const entry = join(ROOT, 'libs', lib, 'dist', 'index.d.ts');
    const exported = existsSync(entry) && new RegExp(`\\b${name}\\b`).test(readFileSync(entry, 'utf8'));
    if (!exported)
      throw new Error(
        `${file}: the type ${name} of libs/${lib} is used in a declaration but not exported from libs/${lib}/src/index.ts; export it there`,
      );
    return `import(${quote}@dura/${lib}${quote}).${name}`;
  });
}

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal}) in ${cwd}:\n${result.stdout}${result.stderr}`,
    );
  return result.stdout;
}

/** Compiles one package to its dist/ (JavaScript and .d.ts) with ESM-resolvable imports. */
export function buildPackage(dir) {
  const absolute = join(ROOT, dir);
  const dist = join(absolute, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  run(process.execPath, [tsc, '-p', join(absolute, 'tsconfig.build.json')], ROOT);
  for (const file of filesUnder(dist).filter((f) => f.endsWith('.js') || f.endsWith('.d.ts')))
    writeFileSync(file, withPackageTypeImports(withExtensions(readFileSync(file, 'utf8'), file), file));
}

/** Builds and packs every SDK package into `out`; returns the tarballs' paths in build order. */
export function packSdk(out) {
  mkdirSync(out, { recursive: true });
  const manifests = SDK_PACKAGES.map((dir) =>
    JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')),
  );
  const versions = new Map(manifests.map((pkg) => [pkg.name, pkg.version]));
  const stage = mkdtempSync(join(tmpdir(), 'dura-sdk-stage-'));
  try {
    return SDK_PACKAGES.map((dir, i) => {
      const pkg = manifests[i];
      log(`building ${pkg.name} (${dir})`);
      buildPackage(dir);
      const copy = join(stage, pkg.name.replace('/', '-'));
      cpSync(join(ROOT, dir, 'dist'), join(copy, 'dist'), { recursive: true });
      if (existsSync(join(ROOT, dir, 'README.md')))
        cpSync(join(ROOT, dir, 'README.md'), join(copy, 'README.md'));
      writeFileSync(
        join(copy, 'package.json'),
        `${JSON.stringify(publishedManifest(pkg, versions), null, 2)}\n`,
      );
      const [packed] = JSON.parse(
        run('npm', ['pack', copy, '--pack-destination', out, '--json', '--silent'], ROOT),
      );
      const tarball = join(out, packed.filename);
      const shown = relative(process.cwd(), tarball).startsWith('..')
        ? tarball
        : relative(process.cwd(), tarball);
      log(`packed ${shown} (${packed.entryCount} files, ${(packed.size / 1024).toFixed(1)} kB)`);
      return tarball;
    });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--out');
  const out = resolve(at > 0 && process.argv[at + 1] ? process.argv[at + 1] : join(ROOT, 'dist', 'sdk'));
  try {
    const tarballs = packSdk(out);
    log(`${tarballs.length} packages in ${out}`);
  } catch (err) {
    process.stderr.write(`sdk: ${err.message}\n`);
    process.exit(1);
  }
}
