import { DuraError } from '@dura/contracts';

/**
 * What a failed first connection means: a server that refuses the credentials or lacks the database will not
 * change its mind (not retryable: a starting service exits), while one that is down or still starting may.
 */
export function connectError(err: unknown, url: string): DuraError {
  const message = (err as Error).message;
  const raw = (err as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : '';
  // SQLSTATE class 28: invalid authorization; 3D000: no such database.
  if (code.startsWith('28'))
    return new DuraError(
      'database_auth_failed',
      `Postgres at ${redact(url)} refused the credentials (${message}); check the user and password in DATABASE_URL`,
      { cause: err },
    );
  if (code === '3D000')
    return new DuraError(
      'database_missing',
      `Postgres at ${redact(url)} has no such database (${message}); create it or fix the database name in DATABASE_URL`,
      { cause: err },
    );
  return new DuraError(
    'database_unreachable',
    `cannot connect to Postgres at ${redact(url)} (${message}); check DATABASE_URL and that the server is up`,
    { retryable: true, cause: err },
  );
}

/** Hides the password of a connection URL in messages and logs. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
