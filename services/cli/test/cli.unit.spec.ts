import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiUnreachable, NatsUnreachable, RunNotFound } from '@dura/client';
import { ContractViolation, DuraError } from '@dura/contracts';
import { StreamUnavailable } from '@dura/event-store';
import { intFlag, isoFlag, jsonFlag, listFlag } from '../src/args';
import { runCli } from '../src/cli';
import { EXIT, UsageError, type ParsedArgs } from '../src/command';
import { describeFailure } from '../src/exit-code';
import { GLOBAL_FLAGS } from '../src/globals';
import { renderTable } from '../src/output';
import { COMMANDS } from '../src/commands/index';

const flags = (values: ParsedArgs['flags']): ParsedArgs => ({ positionals: [], flags: values });

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { DURA_DEV_STATE_FILE: join(tmpdir(), 'dura-cli-unit-no-dev-stack.json') },
    streams: { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

describe('the command registry', () => {
  it('holds every command once, each with a summary, a usage naming it, and flags that do not shadow global ones', async () => {
    const names = COMMANDS.map((c) => c.name);
    expect(names.slice(0, 7)).toEqual(['run', 'watch', 'get', 'events', 'ls', 'signal', 'cancel']);
    expect(new Set(names).size).toBe(names.length);
    for (const entry of COMMANDS) {
      expect(entry.summary.length).toBeGreaterThan(10);
      const command = await entry.load();
      expect(command.name).toBe(entry.name);
      expect(command.usage.startsWith(`dura ${command.name}`)).toBe(true);
      expect(command.positionals.min).toBeLessThanOrEqual(command.positionals.max);
      for (const flag of Object.keys(command.flags)) expect(Object.keys(GLOBAL_FLAGS)).not.toContain(flag);
    }
  });
});

describe('runCli without I/O', () => {
  it('prints the root help on stdout for --help, before or after global flags', async () => {
    const plain = await cli(['--help']);
    const withFlags = await cli(['--json', '--nats', 'nats://x:1', '-h']);

    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^dura: submit, follow and inspect Dura runs\./);
    expect(withFlags).toEqual(plain);
  });

  it('finds the command after global flags that take a value', async () => {
    const { code, stdout } = await cli(['--api', 'http://x', 'get', '--help']);

    expect(code).toBe(0);
    expect(stdout).toMatch(/^dura get: /);
  });

  it('reports usage errors on stderr with the usage, exit 2, and nothing on stdout', async () => {
    const { code, stdout, stderr } = await cli(['signal', 'run-1']);

    expect(code).toBe(EXIT.usage);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^dura: dura signal takes 2 arguments, got 1\nusage: dura signal <run-id> <name>/);
  });
});

describe('exit codes for what a command throws', () => {
  it.each([
    ['a usage error', new UsageError('bad'), EXIT.usage],
    ['an invalid request', new ContractViolation('run request is invalid', ['agent: required']), EXIT.usage],
    ['an unknown run', new RunNotFound('r'), EXIT.notFound],
    ['unreachable NATS', new NatsUnreachable('nats://x'), EXIT.unreachable],
    ['an unreachable API', new ApiUnreachable('http://x'), EXIT.unreachable],
    ['JetStream not answering', new StreamUnavailable('no stream'), EXIT.unreachable],
    ['a run id used by another request', new DuraError('run_id_conflict', 'run id r is used'), EXIT.usage],
    ['another Dura error', new DuraError('corrupt_event', 'bad bytes'), EXIT.error],
    ['anything else', new TypeError('oops'), EXIT.error],
  ])('%s', (_, error, code) => {
    const failure = describeFailure(error);

    expect(failure.code).toBe(code);
    expect(failure.lines[0]).toContain(error.message);
  });

  it('lists the issues of an invalid request, one per line', () => {
    const failure = describeFailure(new ContractViolation('run request is invalid', ['a: x', 'b: y']));

    expect(failure.lines).toEqual(['run request is invalid', '  a: x', '  b: y']);
  });
});

describe('flag helpers', () => {
  it('intFlag checks the bounds and names the flag', () => {
    expect(intFlag(flags({ n: '7' }), 'n', { min: 1 })).toBe(7);
    expect(intFlag(flags({}), 'n')).toBeUndefined();
    expect(() => intFlag(flags({ n: '0' }), 'n', { min: 1, max: 5 })).toThrow(
      new UsageError('--n must be an integer from 1 to 5, got "0"'),
    );
    expect(() => intFlag(flags({ n: '1.5' }), 'n')).toThrow(/--n must be an integer/);
  });

  it('listFlag splits commas and repeats', () => {
    expect(listFlag(flags({ s: ['a,b', 'c'] }), 's')).toEqual(['a', 'b', 'c']);
    expect(listFlag(flags({}), 's')).toEqual([]);
  });

  it('jsonFlag and isoFlag refuse what they cannot read', () => {
    expect(jsonFlag(flags({ p: '{"a":[1]}' }), 'p')).toEqual({ a: [1] });
    expect(() => jsonFlag(flags({ p: '{a}' }), 'p')).toThrow(/--p is not valid JSON/);
    expect(isoFlag(flags({ t: '2025-01-31T12:00:00+01:00' }), 't')).toBe('2025-01-31T11:00:00.000Z');
    expect(() => isoFlag(flags({ t: 'soon' }), 't')).toThrow(/--t must be an ISO-8601 time/);
  });
});

describe('renderTable', () => {
  it('pads every column but the last to its widest cell, two spaces apart', () => {
    expect(
      renderTable(
        ['RUN', 'STATUS', 'TAGS'],
        [
          ['a-long-run-id', 'completed', 'x'],
          ['b', 'failed', ''],
        ],
      ),
    ).toEqual(['RUN            STATUS     TAGS', 'a-long-run-id  completed  x', 'b              failed']);
  });
});
