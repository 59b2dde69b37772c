// A command whose flags and arguments checked out, run with the SDK client: the URLs (flag, variable, dev stack,
// default), the NATS credentials and the read API's token, then what the command throws mapped to an exit code.
// Loaded by cli.ts only once there is a command to run, so help and usage errors never load the client.
import { connectDuraClient, formatEvent, natsSecurityFromEnv } from '@dura/client';
import type { NatsSecurity } from '@dura/contracts';
import { resolveApiToken } from './api-token';
import type { CliOptions } from './cli-options';
import { EXIT, UsageError, type CommandModule, type ParsedArgs } from './command';
import { describeNatsSource, resolveEndpoints } from './endpoints';
import { describeFailure } from './exit-code';
import { NATS_SECURITY_FLAGS } from './globals';
import { usageFailure } from './help';
import { createOutput } from './output';

/** Runs `command` with its parsed arguments; `values` are every flag given (the global ones included). */
export async function execute(
  command: CommandModule,
  args: ParsedArgs,
  values: Record<string, unknown>,
  env: Record<string, string | undefined>,
  options: CliOptions,
): Promise<number> {
  const bootstrap = createOutput(false, options.streams);
  const json = values.json === true;
  const endpoints = resolveEndpoints({ nats: stringValue(values.nats), api: stringValue(values.api) }, env);
  const { natsUrl, apiUrl } = endpoints;
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
  const out = createOutput(json, options.streams, formatEvent);
  const client = connectDuraClient({
    natsUrl,
    apiUrl,
    ...(apiToken === undefined ? {} : { apiToken }),
    name: `dura-cli-${command.name}`,
    security,
  });
  try {
    return await command.run(args, {
      client,
      json,
      out,
      natsUrl,
      apiUrl,
      signal: options.signal ?? new AbortController().signal,
    });
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
