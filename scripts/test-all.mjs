#!/usr/bin/env node
// `npm test`: every project's lint, typecheck, unit, integration and e2e tasks, through Nx.
//
// The longest task by far is @dura/dev's e2e suite (about 20 minutes on 2 cores). Nx starts the tasks of
// projects that others depend on first, so that suite, whose project depends on every library, used to start
// last and the run took its length plus everything before it. Here it starts at once, in an Nx process of its
// own beside the rest (which runs two tasks at a time, as nx.json says); the e2e tests wait on conditions with
// timeouts sized for a loaded machine. Both always run to the end, so one log shows every failure; the exit
// code is 1 if either failed.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const nx = fileURLToPath(new URL('./nx.mjs', import.meta.url));
const LONG = '@dura/dev';
const ALL_TARGETS = 'lint,typecheck,test-unit,test-int,test-e2e';

/** Runs `node scripts/nx.mjs ...args` with the output on this process's; resolves with its exit code. */
function nxRun(label, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [nx, ...args, '--outputStyle=stream'], { stdio: 'inherit' });
    child.on('error', (err) => {
      console.error(`${label}: could not start Nx: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      if (code !== 0) console.error(`${label}: Nx exited with ${signal ?? `code ${code}`}`);
      resolve(code ?? 1);
    });
  });
}

/** The long suite, then the rest of its project's targets. */
async function long() {
  const e2e = await nxRun(`${LONG} e2e`, ['run', `${LONG}:test-e2e`]);
  const rest = await nxRun(`${LONG} (lint, typecheck)`, [
    'run-many',
    '--targets=lint,typecheck,test-unit,test-int',
    `--projects=${LONG}`,
  ]);
  return e2e || rest;
}

const codes = await Promise.all([
  long(),
  nxRun('libraries and services', ['run-many', `--targets=${ALL_TARGETS}`, `--exclude=${LONG}`]),
]);
process.exit(codes.some((code) => code !== 0) ? 1 : 0);
