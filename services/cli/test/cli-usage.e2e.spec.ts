import { describe, expect, it } from 'vitest';
import { freePort, repoRoot, spawnManaged } from '@dura/testing';
import { COMMANDS } from '../src/commands/index';
import { dura } from './system';

// No NATS and no API run for these: usage, help and unreachable servers.
describe.concurrent('dura --help', () => {
  it('lists every command, the global flags and the exit codes, and exits 0', async () => {
    const { code, output } = await dura(['--help']);

    expect(code).toBe(0);
    for (const command of COMMANDS) expect(output).toMatch(new RegExp(`^  ${command.name} +\\S`, 'm'));
    expect(output).toMatch(
      /--nats URL +NATS server \(default \$NATS_URL, else the running dev stack's, else nats:\/\/127\.0\.0\.1:4222\)/,
    );
    expect(output).toMatch(/--api URL +the projector's read API \(default \$DURA_API_URL/);
    expect(output).toMatch(/--json +machine output/);
    for (const exit of [
      '0  ok',
      '1  the run failed',
      '2  usage error',
      '3  not found',
      '4  cannot reach',
      '5  any other',
    ])
      expect(output).toContain(exit);
  });

  it('without a command prints the help on stderr and exits 2', async () => {
    const { code, output } = await dura([]);

    expect(code).toBe(2);
    expect(output).toMatch(/Usage: dura <command>/);
    expect(output).toMatch(/missing command/);
  });

  it.each(COMMANDS.map((command) => [command.name]))(
    'dura %s --help shows its usage and flags, exits 0',
    async (name) => {
      const entry = COMMANDS.find((c) => c.name === name)!;
      const command = await entry.load();

      const { code, output } = await dura([name, '--help']);

      expect(code).toBe(0);
      expect(output).toContain(`dura ${name}: ${entry.summary}`);
      expect(output).toContain(`Usage: ${command.usage.split('\n')[0]}`);
      for (const flag of Object.keys(command.flags)) expect(output).toMatch(new RegExp(`--${flag}\\b`));
      expect(output).toMatch(/Global flags:/);
      expect(output).toMatch(/Exit code/);
    },
  );
});

describe.concurrent('usage errors exit 2 with the command usage', () => {
  it.each([
    ['an unknown command', ['launch'], /unknown command "launch"; commands: run, watch, get/],
    [
      'an unknown flag',
      ['get', 'run-1', '--bogus'],
      /Unknown option '--bogus'[\s\S]*usage: dura get <run-id>/,
    ],
    ['a missing argument', ['get'], /dura get takes 1 argument, got 0[\s\S]*usage: dura get/],
    ['an extra argument', ['watch', 'a', 'b'], /dura watch takes 1 argument, got 2/],
    ['a flag without its value', ['events', 'run-1', '--limit'], /Option '--limit <value>' argument missing/],
    [
      'a non-integer seq',
      ['get', 'run-1', '--at', 'ten'],
      /--at must be an integer from 1 to \d+, got "ten"/,
    ],
    [
      'an out-of-range limit',
      ['ls', '--limit', '501'],
      /--limit must be an integer from 1 to 500, got "501"/,
    ],
    ['an unknown status', ['ls', '--status', 'done'], /unknown --status done; one of pending, running/],
    ['a bad time', ['ls', '--since', 'yesterday'], /--since must be an ISO-8601 time/],
    ['invalid JSON', ['signal', 'run-1', 'go', '--payload', '{oops'], /--payload is not valid JSON/],
    ['run with nothing to run', ['run'], /nothing to run: give a request file/],
    [
      'a missing request file',
      ['run', 'no/such/file.json'],
      /cannot read .*no\/such\/file\.json \(ENOENT\): check the path/,
    ],
    [
      'run --args that is not an object',
      ['run', '--tool', 'echo', '--args', '[1]'],
      /--args for echo must be a JSON object/,
    ],
  ])('%s', async (_, args, message) => {
    const { code, output } = await dura(args);

    expect(output).toMatch(message);
    expect(code).toBe(2);
  });
});

describe('unreachable servers exit 4 and say what to do', () => {
  it('NATS: commands that need it name the URL and how to start a server', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;

    const results = await Promise.all([
      dura(['get', 'run-1', '--nats', url]),
      dura(['watch', 'run-1'], { env: { NATS_URL: url } }),
      dura(['run', '--tool', 'echo', '--nats', url, '--json']),
    ]);

    for (const { code, output } of results) {
      expect(output).toContain(`cannot reach NATS at ${url}`);
      expect(output).toMatch(
        /start nats-server with JetStream \(-js\) or set NATS_URL \/ --nats \[nats_unreachable\]/,
      );
      expect(code).toBe(4);
    }
    // Where the URL came from is a hint: on stderr, and left out under --json.
    expect(results[0]?.output).toContain(`NATS ${url} came from --nats`);
    expect(results[1]?.output).toContain(`NATS ${url} came from $NATS_URL; unset it to use the dev stack`);
    expect(results[2]?.output).not.toContain('came from');
  });

  it('the read API: commands that use it name the URL and how to start the projector', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;

    const results = await Promise.all([
      dura(['ls', '--api', url]),
      dura(['events', 'run-1'], { env: { DURA_API_URL: url } }),
      dura(['get', 'run-1', '--at', '3', '--api', url]),
    ]);

    for (const { code, output } of results) {
      expect(output).toContain(`cannot reach the Dura read API at ${url}`);
      expect(output).toMatch(/start the projector .* or set DURA_API_URL \/ --api \[api_unreachable\]/);
      expect(code).toBe(4);
    }
  });
});

describe('the bin (package.json "bin": dura)', () => {
  it('runs the built CLI and passes its output and exit code through', async () => {
    const run = (args: string[]) =>
      spawnManaged({
        name: 'bin/dura.mjs',
        command: process.execPath,
        args: ['services/cli/bin/dura.mjs', ...args],
        cwd: repoRoot(),
      });
    const help = run(['--help']);
    const usage = run(['get']);

    expect(await help.exited).toEqual({ code: 0, signal: null });
    expect(await usage.exited).toEqual({ code: 2, signal: null });
    await help.waitForOutput(/^dura: submit, follow and inspect Dura runs\./m);
    await usage.waitForOutput(/dura get takes 1 argument, got 0/);
  });
});
