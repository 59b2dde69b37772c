// Builds the console into dist/ when it is missing or older than its sources (run by the root postinstall and
// by the test and bench commands), so `npm ci` leaves a console the projector can serve, with no network later.
//   node services/console/scripts/ensure-built.mjs [--force]
/* global process, console */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const stamp = join(root, 'dist', '.built');
const sources = [
  join(root, 'src'),
  join(root, 'index.html'),
  join(root, 'vite.config.ts'),
  join(root, 'package.json'),
  join(root, '..', '..', 'libs', 'contracts', 'src'),
  join(root, '..', '..', 'libs', 'core', 'src'),
];

function newest(path) {
  if (!existsSync(path)) return 0;
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const force = process.argv.includes('--force');
const builtAt = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (!force && builtAt > 0 && builtAt >= Math.max(...sources.map(newest))) {
  console.log('console: dist is up to date');
  process.exit(0);
}
let vite;
try {
  vite = join(
    dirname(createRequire(join(root, 'package.json')).resolve('vite/package.json')),
    'bin',
    'vite.js',
  );
} catch {
  // A production install (--omit=dev) has no vite: the image builds the console in its own stage.
  console.warn('console: vite is not installed (production install?); not building the console');
  process.exit(0);
}
console.log('console: building dist/');
// Always the production build: vitest sets NODE_ENV=test, and vite would then build React's development JSX
// runtime into dist/, which the console's browser tests and bench:console would serve and measure.
const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'production' },
});
if (result.status !== 0) {
  console.error('console: the build failed; see the errors above, then run "npm run build -w @dura/console"');
  process.exit(result.status ?? 1);
}
writeFileSync(stamp, new Date().toISOString() + '\n');
console.log('console: built into dist/');
