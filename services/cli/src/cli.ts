import { parseArgs, type ParseArgsConfig } from 'node:util';
import { connectDuraClient, natsSecurityFromEnv } from '@dura/client';
import type { NatsSecurity } from '@dura/contracts';
import { EXIT, UsageError, type CommandModule, type FlagSpec } from './command';
import { resolveApiToken } from './api-token';
import { describeFailure } from './exit-code';
import { describeNatsSource, resolveEndpoints } from './endpoints';
import { GLOBAL_FLAGS, NATS_SECURITY_FLAGS } from './globals';
import { commandHelp, rootHelp } from './help';
import { createOutput, type Streams } from './output';
import { COMMANDS, findCommand } from './registry';

export interface CliOptions {
  env?: Record<string, string | undefined>;
  streams?: Streams;
  /** Aborts commands that follow a stream (Ctrl-C). */
  signal?: AbortSignal;
}

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
  const command = findCommand(name);
  if (!command) {
    bootstrap.error(
      `unknown command "${name}"; commands: ${COMMANDS.map((c) => c.name).join(', ')} (dura --help)`,
    );
    return EXIT.usage;
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
    bootstrap.line(commandHelp(command));
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
  const json = values.json === true;
  const endpoints = resolveEndpoints({ nats: stringValue(values.nats), api: stringValue(values.api) }, env);
  const { natsUrl, apiUrl } = endpoints;
  const own = Object.fromEntries(Object.entries(values).filter(([key]) => key in command.flags)) as Record<
    string,
    string | boolean | string[] | undefined
  >;
  let security: NatsSecurity;
  let apiToken: string | undefined;
  try {
    security = natsSecurityFromEnv(securityEnv(env, values));
    apiToken = await resolveApiToken(
      { token: stringValue(values['api-token']), file: stringValue(values['api-token-file']) },
      env,
      (text) => bootstrap.error(text),
    );
  } catch (err) {
    return usageFailure(bootstrap, command, (err as Error).message);
  }
  const out = createOutput(json, options.streams);
  const client = connectDuraClient({
    natsUrl,
    apiUrl,
    ...(apiToken === undefined ? {} : { apiToken }),
    name: `dura-cli-${command.name}`,
    security,
  });
  try {
    return await command.run(
      { positionals, flags: own },
      { client, json, out, natsUrl, apiUrl, signal: options.signal ?? new AbortController().signal },
    );
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(out, command, err.message);
    const failure = describeFailure(err);
    for (const line of failure.lines) out.error(line);
    if (failure.natsRelated) out.note(describeNatsSource(endpoints));
    if (failure.code === EXIT.error && env.DURA_DEBUG && err instanceof Error && err.stack)
      out.note(err.stack);
    return failure.code;
  } finally {
    await client.close();
  }
}

function usageFailure(out: ReturnType<typeof createOutput>, command: CommandModule, message: string): number {
  out.error(`${message}`);
  out.note(`usage: ${command.usage.split('\n').join('\n       ')}\n(dura ${command.name} --help for more)`);
  return EXIT.usage;
}

/** The environment with the NATS security flags given on the command line put over their variables. */
function securityEnv(
  env: Record<string, string | undefined>,
  values: Record<string, unknown>,
): Record<string, string | undefined> {
  const merged = { ...env };
  for (const [flag, variable] of Object.entries(NATS_SECURITY_FLAGS)) {
    const value = stringValue(values[flag]);
    if (value !== undefined) merged[variable] = value;
  }
  return merged;
}

function stringValue(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
