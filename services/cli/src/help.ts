import { EXIT, type CommandEntry, type CommandModule, type FlagSpec, type Output } from './command';
import { GLOBAL_FLAGS } from './globals';

const EXIT_CODES = `Exit codes:
  0  ok; for run and watch: the run completed
  1  the run failed, was cancelled or was rejected (cancel: the run had already ended)
  2  usage error: bad flags, missing or extra arguments, an invalid request
  3  not found: no such run, or no event at that seq
  4  cannot reach NATS or the read API
  5  any other error
  130  interrupted (Ctrl-C)`;

function flagLines(flags: Record<string, FlagSpec>): string[] {
  const entries = Object.entries(flags).map(([name, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : '';
    const value = spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : '';
    const repeat = spec.multiple ? ' (repeatable)' : '';
    return [`${short}--${name}${value}`, `${spec.description}${repeat}`] as const;
  });
  const width = Math.max(0, ...entries.map(([left]) => left.length));
  return entries.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

/** `dura --help`: the commands, the global flags and the exit codes. */
export function rootHelp(commands: readonly CommandEntry[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'dura: submit, follow and inspect Dura runs.',
    '',
    'Usage: dura <command> [arguments] [flags]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Global flags:',
    ...flagLines(GLOBAL_FLAGS),
    '',
    EXIT_CODES,
    '',
    'Run `dura <command> --help` for its arguments and flags.',
  ].join('\n');
}

/** `dura <command> --help`. */
export function commandHelp(entry: CommandEntry, command: CommandModule): string {
  const own = flagLines(command.flags);
  return [
    `dura ${command.name}: ${entry.summary}`,
    '',
    `Usage: ${command.usage.split('\n').join('\n       ')}`,
    ...(own.length > 0 ? ['', 'Flags:', ...own] : []),
    '',
    'Global flags:',
    ...flagLines(GLOBAL_FLAGS),
    ...(command.help ? ['', command.help.trimEnd()] : []),
    ...(command.help?.includes('Exit code')
      ? []
      : [
          '',
          'Exit codes: 0 ok, 1 run failed/cancelled/rejected, 2 usage, 3 not found, 4 unreachable, 5 other.',
        ]),
  ].join('\n');
}

/** A usage error: the message, then the command's usage, on stderr; exit 2. */
export function usageFailure(out: Output, command: CommandModule, message: string): number {
  out.error(`${message}`);
  out.note(`usage: ${command.usage.split('\n').join('\n       ')}\n(dura ${command.name} --help for more)`);
  return EXIT.usage;
}
