#!/usr/bin/env node
// Runs Nx fully offline: no cloud, no daemon, no terminal UI, whatever the caller's shell says.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const nxBin = require.resolve('nx/bin/nx.js');
const env = {
  ...process.env,
  NX_NO_CLOUD: 'true',
  NX_DAEMON: 'false',
  NX_TUI: 'false',
  NX_SKIP_NX_CACHE: process.env.NX_SKIP_NX_CACHE ?? 'false',
};
const result = spawnSync(process.execPath, [nxBin, ...process.argv.slice(2)], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
