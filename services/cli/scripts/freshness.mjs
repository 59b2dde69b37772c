// Whether services/cli/dist/dura.mjs is missing or older than a source it was built from. Cheap enough for every
// `dura` start (one stat per source file, a few milliseconds); used by bin/dura.mjs and scripts/build.mjs.
/* global process */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cliRoot = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = join(cliRoot, '..', '..');

export const OUTPUT = join(cliRoot, 'dist', 'dura.mjs');
/** { startedAt: ms, inputs: paths from the repository root }, written by scripts/build.mjs after the bundle. */
export const BUILD_INFO = join(cliRoot, 'dist', 'build.json');

/**
 * Why the build must run again ("dist/dura.mjs is missing", "libs/x/src/y.ts changed"), or undefined when the
 * build is current. `paths` is for tests: another output, build record and root for the inputs.
 */
export function staleReason(paths = { output: OUTPUT, buildInfo: BUILD_INFO, root: repoRoot }) {
  if (!existsSync(paths.output) || !existsSync(paths.buildInfo)) return 'dist/dura.mjs is missing';
  let info;
  try {
    info = JSON.parse(readFileSync(paths.buildInfo, 'utf8'));
  } catch {
    return 'dist/build.json is unreadable';
  }
  if (typeof info?.startedAt !== 'number' || !Array.isArray(info.inputs))
    return 'dist/build.json is malformed';
  for (const input of info.inputs) {
    const mtime = statSync(join(paths.root, input), { throwIfNoEntry: false })?.mtimeMs;
    if (mtime === undefined) return `${input} is gone`;
    if (mtime > info.startedAt) return `${input} changed`;
  }
  return undefined;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const reason = staleReason();
  process.stdout.write(reason === undefined ? 'fresh\n' : `stale: ${reason}\n`);
}
