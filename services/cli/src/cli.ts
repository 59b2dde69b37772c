// What every `dura` start runs: finds the command, checks its flags and arguments, prints help. It imports
// nothing heavy (no NATS client, no schemas): a command's module loads once it is named, and the SDK client
// (execute.ts) once its arguments are valid, so `dura --help` and a usage error stay quick.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT, type CommandModule, type FlagSpec } from './command';
import { GLOBAL_FLAGS } from './globals';
import { commandHelp, rootHelp, usageFailure } from './help';
import { createOutput } from './output';
import { COMMANDS } from './commands/index';
import type { CliOptions } from './cli-options';

export type { CliOptions } from './cli-options';

type ParseOptions = NonNullable<ParseArgsConfig['options']>;

function toParseOptions(flags: Record<string, FlagSpec>): ParseOptions {
  return Object.fromEntries(
    Object.entries(flags).map(([name, spec]) => [
      name,
      {
        type: spec.type,
        ...(spec.short ? { short: spec.short } : {}),
        ...(spec.multiple ? { multiple: true } : {}),
      },
    ]),
  );
}

/** The command word: the first argument that is neither a flag nor the value of a global string flag. */
function commandIndex(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i] ?? '';
    if (token === '--') return i + 1 < argv.length ? i + 1 : -1;
    if (!token.startsWith('-')) return i;
    const name = token.replace(/^--?/, '');
    if (GLOBAL_FLAGS[name]?.type === 'string') i += 1;
  }
  return -1;
}

/** Runs `dura <argv>` and resolves with the exit code; never throws. */
export async function runCli(argv: readonly string[], options: CliOptions = {}): Promise<number> {
  const env = options.env ?? process.env;
  const bootstrap = createOutput(false, options.streams);
  const at = commandIndex(argv);
  if (at === -1) {
    const wantsHelp = argv.includes('--help') || argv.includes('-h');
    if (wantsHelp) bootstrap.line(rootHelp(COMMANDS));
    else bootstrap.note(`${rootHelp(COMMANDS)}\n\ndura: missing command`);
    return wantsHelp ? EXIT.ok : EXIT.usage;
  }
  const name = argv[at] ?? '';
  const entry = COMMANDS.find((command) => command.name === name);
  if (!entry) {
    bootstrap.error(
      `unknown command "${name}"; commands: ${COMMANDS.map((c) => c.name).join(', ')} (dura --help)`,
    );
    return EXIT.usage;
  }
  let command: CommandModule;
  try {
    command = await entry.load();
  } catch (err) {
    bootstrap.error(
      `dura ${name} cannot be loaded (${(err as Error).message}); run "npm install" in the Dura repository`,
    );
    return EXIT.error;
  }
  const rest = [...argv.slice(0, at), ...argv.slice(at + 1)];
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      options: { ...toParseOptions(command.flags), ...toParseOptions(GLOBAL_FLAGS) },
      allowPositionals: true,
      strict: true,
    }));
  } catch (err) {
    return usageFailure(bootstrap, command, (err as Error).message);
  }
  if (values.help === true) {
    bootstrap.line(commandHelp(entry, command));
    return EXIT.ok;
  }
  const { min, max } = command.positionals;
  if (positionals.length < min || positionals.length > max) {
    const wanted = min === max ? `${min}` : `${min} to ${max}`;
    return usageFailure(
      bootstrap,
      command,
      `dura ${command.name} takes ${wanted} argument${max === 1 ? '' : 's'}, got ${positionals.length}`,
    );
  }
  const own = Object.fromEntries(Object.entries(values).filter(([key]) => key in command.flags)) as Record<
    string,
    string | boolean | string[] | undefined
  >;
  const { execute } = await import('./execute');
  return execute(command, { positionals, flags: own }, values, env, options);
}
