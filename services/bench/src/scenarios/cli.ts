// K: how long a `dura` command takes from the shell's point of view: process start to exit, one at a time.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, repoRoot } from '@dura/testing';
import type { BenchScenarios } from '../schema';
import { distribution } from '../stats';

interface CliCase {
  name: string;
  command: string;
  args: string[];
  /** The exit code the command must end with; anything else fails the scenario (a wrong figure is worse). */
  exitCode: number;
}

/** Wall time of one `command args` run to its exit; throws on another exit code than `expected`. */
function timeOnce(command: string, args: string[], expected: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    let output = '';
    const child = spawn(command, args, { cwd: repoRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = performance.now() - began;
      if (code === expected) resolve(ms);
      else
        reject(
          new Error(`${command} ${args.join(' ')} exited ${code}, not ${expected}: ${output.slice(0, 500)}`),
        );
    });
  });
}

export async function cliStartup(sizes: { cliRuns: number }): Promise<NonNullable<BenchScenarios['cli']>> {
  const bin = join(repoRoot(), 'services', 'cli', 'bin', 'dura.mjs');
  // Nothing listens there: `ls` loads its client, asks the read API, and maps the refusal to exit 4.
  const closedApi = `http://127.0.0.1:${await freePort()}`;
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const cases: CliCase[] = [
    { name: 'dura --help', command: process.execPath, args: [bin, '--help'], exitCode: 0 },
    {
      name: 'dura ls (API unreachable)',
      command: process.execPath,
      args: [bin, 'ls', '--api', closedApi],
      exitCode: 4,
    },
    { name: 'npx dura --help', command: npx, args: ['--no-install', 'dura', '--help'], exitCode: 0 },
  ];
  // Once untimed: builds services/cli/dist when a source changed since the last build.
  await timeOnce(process.execPath, [bin, '--help'], 0);
  const commands = [];
  for (const c of cases) {
    const samples: number[] = [];
    for (let i = 0; i < sizes.cliRuns; i += 1) samples.push(await timeOnce(c.command, c.args, c.exitCode));
    commands.push({ name: c.name, wallMs: distribution(samples) });
  }
  return {
    mode: 'processes',
    note: 'process start to exit, one at a time, on this machine as loaded; the built bin, no tsx',
    node: process.version,
    commands,
  };
}
