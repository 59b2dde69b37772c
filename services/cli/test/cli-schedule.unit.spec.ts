import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli';
import { EXIT } from '../src/command';

/** Runs `dura <argv>` in process with no NATS reachable: only what fails before any call can pass. */
async function cli(argv: string[]) {
  let out = '';
  const code = await runCli(argv, {
    env: {},
    streams: { stdout: (text) => (out += text), stderr: (text) => (out += text) },
  });
  return { code, out };
}

const create = ['schedule', 'create', 'nightly', '--tenant', 'acme', '--agent', 'report'];

describe('dura schedule: usage errors exit 2 before anything is sent, saying what to give', () => {
  it.each([
    [['schedule', 'rename', 'x'], /unknown subcommand "rename"/],
    [[...create], /exactly one of --cron EXPR .* and --every DURATION/],
    [[...create, '--cron', '0 2 * * *', '--every', '1h'], /exactly one of --cron/],
    [[...create, '--every', '5 minutes'], /--every 5 minutes: expected a duration such as 30s/],
    [['schedule', 'create', 'nightly', '--every', '1h', '--agent', 'report'], /--tenant is required/],
    [['schedule', 'create', 'nightly', '--every', '1h', '--tenant', 'acme'], /--request FILE .* or --agent/],
    [
      [...create, '--every', '1h', '--request', '/nonexistent/r.json', '--agent', 'x'],
      /--request FILE .* or --agent/,
    ],
    [[...create, '--every', '1h', '--input', '{oops'], /--input/],
    [['schedule', 'get', 'nightly', '--next', '0'], /--next must be an integer from 1 to 100/],
  ])('%j', async (argv, message) => {
    const { code, out } = await cli(argv);
    expect(code).toBe(EXIT.usage);
    expect(out).toMatch(message);
  });

  it('--help shows the subcommands and an example of each kind of timing', async () => {
    const { code, out } = await cli(['schedule', '--help']);
    expect(code).toBe(EXIT.ok);
    expect(out).toMatch(/dura schedule pause\|resume\|trigger\|delete <id>/);
    expect(out).toMatch(/--cron "0 2 \* \* \*" --tz Europe\/Paris/);
    expect(out).toMatch(/--every 30s/);
  });
});
