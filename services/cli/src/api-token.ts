import { readFile } from 'node:fs/promises';
import { UsageError } from './command';

/** Why `--api-token` is discouraged, printed each time it is used. */
export const API_TOKEN_FLAG_WARNING =
  'warning: --api-token puts the token in the process list (ps) and your shell history; ' +
  'set DURA_API_TOKEN, or put it in a file readable only by you and pass --api-token-file FILE (or DURA_API_TOKEN_FILE)';

/**
 * The bearer token for the read API, first found of: `--api-token` (still works, with a warning),
 * `--api-token-file`, `DURA_API_TOKEN_FILE`, `DURA_API_TOKEN`. A file holds the token alone (surrounding
 * whitespace and a final newline are ignored); a missing or empty file is a usage error naming it.
 */
export async function resolveApiToken(
  flags: { token?: string | undefined; file?: string | undefined },
  env: Record<string, string | undefined>,
  warn: (text: string) => void,
): Promise<string | undefined> {
  if (flags.token !== undefined && flags.file !== undefined)
    throw new UsageError('--api-token and --api-token-file are both given: keep --api-token-file');
  if (flags.token !== undefined) {
    warn(API_TOKEN_FLAG_WARNING);
    return flags.token === '' ? undefined : flags.token;
  }
  if (flags.file !== undefined) return readTokenFile(flags.file, '--api-token-file');
  if (env.DURA_API_TOKEN_FILE) return readTokenFile(env.DURA_API_TOKEN_FILE, 'DURA_API_TOKEN_FILE');
  return env.DURA_API_TOKEN || undefined;
}

async function readTokenFile(path: string, source: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (err as Error).message;
    throw new UsageError(
      `${source}: the token file ${path} ${reason}; point it at the file holding the API token`,
    );
  }
  const token = text.trim();
  if (token === '' || /\s/.test(token))
    throw new UsageError(
      `${source}: the token file ${path} ${token === '' ? 'is empty' : 'holds more than one word'}; it must hold the API token alone`,
    );
  return token;
}
