import { devStateDir, readDevStates, type DevState } from '@dura/client';
import { DEFAULT_API_URL, DEFAULT_NATS_URL } from './globals';

/** Where a URL came from, for messages that say which setting to change. */
export type EndpointSource = 'flag' | 'env' | 'dev' | 'default';

export interface Endpoints {
  natsUrl: string;
  apiUrl: string;
  natsFrom: EndpointSource;
  apiFrom: EndpointSource;
  /** Where the dev stacks' state is read (when a flag or variable did not decide). */
  devFile: string;
  /** The dev stacks running now, newest first (the first is the one used): empty when none was looked for. */
  devStacks: DevState[];
}

/**
 * The NATS and API URLs: a flag, else its variable, else the newest running dev stack (both URLs from the same
 * one, for every command), else the default.
 */
export function resolveEndpoints(
  flags: { nats?: string | undefined; api?: string | undefined },
  env: Record<string, string | undefined>,
  readDev: typeof readDevStates = readDevStates,
): Endpoints {
  const override = env.DURA_DEV_STATE_FILE;
  const devFile = override !== undefined && override !== '' ? override : `${devStateDir()}/<pid>.json`;
  const needDev = (flags.nats ?? env.NATS_URL) === undefined || (flags.api ?? env.DURA_API_URL) === undefined;
  const devStacks = needDev ? readDev(env) : [];
  const dev = devStacks[0];
  const pick = (
    flag: string | undefined,
    variable: string | undefined,
    fromDev: string | undefined,
    fallback: string,
  ) =>
    flag !== undefined
      ? { url: flag, from: 'flag' as const }
      : variable !== undefined && variable !== ''
        ? { url: variable, from: 'env' as const }
        : fromDev !== undefined
          ? { url: fromDev, from: 'dev' as const }
          : { url: fallback, from: 'default' as const };
  const nats = pick(flags.nats, env.NATS_URL, dev?.natsUrl, DEFAULT_NATS_URL);
  const api = pick(flags.api, env.DURA_API_URL, dev?.apiUrl, DEFAULT_API_URL);
  return { natsUrl: nats.url, apiUrl: api.url, natsFrom: nats.from, apiFrom: api.from, devFile, devStacks };
}

/** One line saying where the NATS URL came from and how to point elsewhere. */
export function describeNatsSource(endpoints: Endpoints): string {
  switch (endpoints.natsFrom) {
    case 'flag':
      return `NATS ${endpoints.natsUrl} came from --nats`;
    case 'env':
      return `NATS ${endpoints.natsUrl} came from $NATS_URL; unset it to use the dev stack (npm run dev)`;
    case 'dev':
      return `NATS ${endpoints.natsUrl} came from ${describeDevStack(endpoints)}`;
    case 'default':
      return `NATS ${endpoints.natsUrl} is the default: no dev stack is running (no live ${endpoints.devFile}); start one with \`npm run dev\`, or pass --nats / set NATS_URL`;
  }
}

/** The dev stack the URLs came from, and the others running beside it. */
function describeDevStack(endpoints: Endpoints): string {
  const [used, ...others] = endpoints.devStacks;
  const which = used
    ? `the dev stack of process ${used.pid} (${endpoints.devFile.replace('<pid>', String(used.pid))})`
    : 'the dev stack';
  if (others.length === 0) return which;
  return `${which}, the newest of ${others.length + 1} running (others: ${others
    .map((stack) => `process ${stack.pid} at ${stack.apiUrl}`)
    .join(', ')}; pass --nats/--api to talk to one of them)`;
}
