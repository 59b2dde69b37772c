#!/usr/bin/env node
// `npm test`: lint, typecheck and every test tier, in two lanes that start together so the longest task is
// never left for last:
//   - @dura/dev's end-to-end suite (the longest task by far), on three vitest workers: its files mostly wait
//     (ack waits, leases, redeliveries), each on about a third of a core, so two workers left a core idle;
//   - the type check and the lint of the whole tree in one process (`npm run check`: each TypeScript program
//     is built and checked once, and ESLint's type-aware rules read its types; the libraries are linted and
//     checked once, not once per project that imports them), then the unit,
//     integration and end-to-end tiers of every other project through Nx, two tasks at a time.
// DURA_E2E_WORKERS and DURA_TEST_PARALLEL change the 3 and the 2.
// Each tier's vitest run shares one module graph among its files (`--no-isolate` in the package scripts): a
// file imports the libraries once per worker, not once per file (the planner's integration tier took 58 s of
// CPU isolated, 20 s shared). A file there may not mock a module its package already loaded (the mock would
// take in no file but the first): it injects what it needs instead, or stubs the environment.
// Every step runs even when an earlier one failed, so one run reports every failure; the exit status is 1 if
// any step failed. The slow tier (`npm run test:slow`) and the soaks are not part of it (docs/guarantees.md).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const nx = join(root, 'scripts', 'nx.mjs');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** A positive whole number from the environment, or the default; anything else stops the run, naming the variable. */
function count(name, fallback) {
  const value = process.env[name] ?? String(fallback);
  if (!/^[1-9][0-9]*$/.test(value)) {
    console.error(
      `${name}=${value}: expected a whole number, e.g. ${fallback}; unset it for the default ${fallback}`,
    );
    process.exit(1);
  }
  return value;
}
// The other lane's Nx tasks at a time, beside the end-to-end suite's workers.
const lanePar = count('DURA_TEST_PARALLEL', 2);
// The end-to-end suite's vitest workers (its package script alone runs two).
const e2eWorkers = count('DURA_E2E_WORKERS', 3);

/** Runs one command; resolves to its exit status. Each output line is prefixed with `label: ` when one is given. */
function run(label, command, args, cwd = root, env = process.env) {
  return new Promise((resolve) => {
    const started = Date.now();
    console.log(`\n> ${label ?? 'workspace'}: ${command} ${args.join(' ')}`);
    const child = spawn(command, args, { cwd, env, stdio: label ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (label) {
      for (const [from, to] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ]) {
        let rest = '';
        from.setEncoding('utf8');
        from.on('data', (chunk) => {
          const lines = (rest + chunk).split('\n');
          rest = lines.pop() ?? '';
          if (lines.length > 0) to.write(lines.map((line) => `${label}: ${line}\n`).join(''));
        });
        from.on('end', () => {
          if (rest) to.write(`${label}: ${rest}\n`);
        });
      }
    }
    child.on('error', (error) => {
      console.error(`${command} could not start (${error.message}): is it installed and on PATH?`);
      resolve(1);
    });
    child.on('close', (code, signal) => {
      const status = code ?? 1;
      const seconds = Math.round((Date.now() - started) / 1000);
      const how = signal ? `killed by ${signal}` : `exit ${status}`;
      console.log(`\n> ${label ?? 'workspace'}: ${command} ${args.join(' ')}: ${how} after ${seconds} s`);
      resolve(status);
    });
  });
}

async function checksAndOtherTiers() {
  const results = [];
  results.push(await run(undefined, npm, ['run', '--silent', 'check']));
  results.push(
    await run(undefined, process.execPath, [
      nx,
      'run-many',
      '-t',
      'test-unit',
      'test-int',
      'test-e2e',
      '--exclude=@dura/dev',
      `--parallel=${lanePar}`,
      '--outputStyle=stream',
    ]),
  );
  return results;
}

const [devE2e, others] = await Promise.all([
  run('@dura/dev', npm, ['run', '--silent', 'test-e2e'], join(root, 'services', 'dev'), {
    ...process.env,
    VITEST_MAX_WORKERS: e2eWorkers,
  }),
  checksAndOtherTiers(),
]);
const failed = [devE2e, ...others].some((status) => status !== 0);
if (failed) console.error('\nnpm test: at least one step failed (see its `exit` line above)');
process.exit(failed ? 1 : 0);
