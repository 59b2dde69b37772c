#!/usr/bin/env node
// The `dura` command (`npx dura …`, `npm run dura -- …`). Runs dist/dura.mjs, the CLI built into plain
// JavaScript by scripts/build.mjs (the root postinstall builds it; this rebuilds it when a source is newer).
// `dura replay` with --agents/--tools/--model imports the user's TypeScript modules together with the planner's
// own packages, so it alone runs the CLI from its sources through tsx, sharing one copy of each package.
import { spawn } from 'node:child_process';
import process from 'node:process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { staleReason } from '../scripts/freshness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const MODULE_FLAGS = ['--agents', '--tools', '--model'];

/** `dura replay … --agents ./agents.ts`: may import TypeScript (checked loosely: a false yes is only slower). */
function importsUserModules(argv) {
  return (
    argv.includes('replay') &&
    argv.some((arg) => MODULE_FLAGS.some((flag) => arg === flag || arg.startsWith(`${flag}=`)))
  );
}

function fromSources() {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const child = spawn(process.execPath, ['--import', tsx, join(here, '..', 'src', 'main.ts'), ...args], {
    stdio: 'inherit',
  });
  // Ctrl-C reaches the child too (same process group); it decides how to stop, and we report its exit code.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => undefined);
  child.on('error', (err) => {
    process.stderr.write(
      `dura: cannot start node (${err.message}); is Node 20 or newer installed (24 LTS recommended)?\n`,
    );
    process.exit(5);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 5)));
}

async function ensureBuilt() {
  const reason = staleReason();
  if (reason === undefined) return true;
  const { buildCli } = await import('../scripts/build.mjs');
  process.stderr.write(`dura: building services/cli/dist (${reason})…\n`);
  try {
    if (await buildCli({ quiet: true })) return true;
    process.stderr.write(
      `dura: services/cli/dist/dura.mjs cannot be built here (${reason}, and esbuild is not installed); ` +
        'run "npm install" in the Dura repository\n',
    );
  } catch (err) {
    process.stderr.write(
      `dura: building services/cli/dist failed (${err instanceof Error ? err.message : String(err)}); ` +
        'fix the source, then run "npm install" (or node services/cli/scripts/build.mjs --force)\n',
    );
  }
  return false;
}

if (process.env.DURA_CLI_FROM_SOURCE === '1' || importsUserModules(args)) fromSources();
else if (await ensureBuilt()) await import('../dist/dura.mjs');
else process.exit(5);
