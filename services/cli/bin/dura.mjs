#!/usr/bin/env node
// The `dura` command: runs src/main.ts through tsx (resolved from this package), passing arguments and exit code.
import { spawn } from 'node:child_process';
import process from 'node:process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const child = spawn(
  process.execPath,
  ['--import', tsx, join(here, '..', 'src', 'main.ts'), ...process.argv.slice(2)],
  { stdio: 'inherit' },
);
// Ctrl-C reaches the child too (same process group); it decides how to stop, and we report its exit code.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => undefined);
child.on('error', (err) => {
  process.stderr.write(`dura: cannot start node (${err.message}); is Node 22 or newer installed (24 LTS recommended)?\n`);
  process.exit(5);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 5)));
