import { readFile } from 'node:fs/promises';
import {
  AuthorizationError,
  credsAuthenticator,
  nkeyAuthenticator,
  nkeys,
  PermissionViolationError,
  tokenAuthenticator,
  UserAuthenticationExpiredError,
  usernamePasswordAuthenticator,
  type ConnectionOptions,
  type NatsConnection,
} from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { describeNatsAuth, DuraError, natsServers, type NatsSecurity } from '@dura/contracts';
import { skipSettledRequestErrors } from './settled-requests';

/** Everything `connect` needs besides the servers, from the security settings; secrets never leave this object. */
export async function natsConnectionOptions(security: NatsSecurity): Promise<Partial<ConnectionOptions>> {
  const options: Partial<ConnectionOptions> = {};
  const { auth } = security;
  if (auth.kind === 'user') options.authenticator = usernamePasswordAuthenticator(auth.user, auth.password);
  if (auth.kind === 'token') options.authenticator = tokenAuthenticator(auth.token);
  if (auth.kind === 'nkey') options.authenticator = nkeyAuthenticator(await readSeed(auth.seedFile));
  if (auth.kind === 'creds') options.authenticator = credsAuthenticator(await readCreds(auth.credsFile));
  if (security.tls) {
    const { caFile, certFile, keyFile } = security.tls;
    options.tls = {
      ...(caFile === undefined ? {} : { ca: await readPem(caFile, 'NATS_TLS_CA_FILE', 'CERTIFICATE') }),
      ...(certFile === undefined
        ? {}
        : { cert: await readPem(certFile, 'NATS_TLS_CERT_FILE', 'CERTIFICATE') }),
      ...(keyFile === undefined ? {} : { key: await readPem(keyFile, 'NATS_TLS_KEY_FILE', 'PRIVATE KEY') }),
    };
  }
  if (security.inboxPrefix !== undefined) options.inboxPrefix = security.inboxPrefix;
  return options;
}

export interface OpenNatsOptions {
  url: string;
  name: string;
  security?: NatsSecurity;
  /** Further options (timeouts, reconnect policy); the security options win over them. */
  connect?: Partial<ConnectionOptions>;
}

/** Opens a connection with the configured credentials; every failure says what was tried and what to check. */
export async function openNatsConnection(options: OpenNatsOptions): Promise<NatsConnection> {
  const security = options.security ?? { auth: { kind: 'none' } };
  const secured = await natsConnectionOptions(security);
  skipSettledRequestErrors();
  try {
    return await connect({
      // nats.js captures a stack per request by default (two Error objects per publish): a cost on every
      // append for a trace that our own errors carry anyway (run, sequence, subject).
      noAsyncTraces: true,
      ...options.connect,
      ...secured,
      servers: natsServers(options.url),
      name: options.name,
    });
  } catch (err) {
    throw explainConnectError(err, options.url, security);
  }
}

/** Maps what nats.js throws on connect to a DuraError that names the identity used and what to check. */
export function explainConnectError(err: unknown, url: string, security: NatsSecurity): DuraError {
  const who = describeNatsAuth(security.auth);
  const message = err instanceof Error ? err.message : String(err);
  if (
    err instanceof AuthorizationError ||
    err instanceof UserAuthenticationExpiredError ||
    /authorization/i.test(message)
  ) {
    return new DuraError(
      'nats_auth_failed',
      `NATS at ${url} rejected ${who} (${message}): ${AUTH_HINT[security.auth.kind]}`,
      { cause: err },
    );
  }
  if (TLS_ERROR.test(message) || TLS_ERROR.test(errorCode(err))) {
    return new DuraError(
      'nats_tls_failed',
      `TLS with NATS at ${url} failed (${message}): check that NATS_TLS_CA_FILE holds the CA that signed the ` +
        "server's certificate, that the URL's host name is in that certificate, and that the server accepts " +
        'the client certificate (NATS_TLS_CERT_FILE/NATS_TLS_KEY_FILE) if it verifies clients',
      { cause: err },
    );
  }
  return new DuraError(
    'nats_unreachable',
    `cannot connect to NATS at ${url} (${message}); start a server with JetStream (nats-server -js) or set NATS_URL`,
    { retryable: true, cause: err },
  );
}

/** A permission violation as one readable line: which operation on which subject the user may not do. */
export function explainPermissionViolation(
  cause: unknown,
  security: NatsSecurity | undefined,
): string | undefined {
  // nats.js wraps a denied request's violation in a RequestError; look through the causes.
  let err = cause;
  for (
    let depth = 0;
    depth < 4 && !(err instanceof PermissionViolationError) && err instanceof Error;
    depth++
  )
    err = err.cause;
  if (!(err instanceof PermissionViolationError)) return undefined;
  const who = describeNatsAuth(security?.auth ?? { kind: 'none' });
  const inbox = err.operation === 'subscription' && err.subject.startsWith('_INBOX');
  return (
    `NATS denied ${who} ${err.operation === 'publish' ? 'publishing to' : 'subscribing to'} "${err.subject}": ` +
    (inbox
      ? 'set NATS_INBOX_PREFIX to the reply prefix this user may subscribe to (deploy/nats/permissions.conf gives each user its own, e.g. _INBOX.planner)'
      : "the user's permissions do not allow it; check deploy/nats/permissions.conf and that this process runs as the right user")
  );
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : '';
}

const TLS_ERROR =
  /tls|ssl|certificate|self[- ]signed|CERT_|DEPTH_ZERO|ERR_OSSL|handshake|altnames|UNABLE_TO_VERIFY/i;

const AUTH_HINT: Record<NatsSecurity['auth']['kind'], string> = {
  none: 'the server requires credentials: set NATS_USER and NATS_PASSWORD, NATS_TOKEN, NATS_NKEY_SEED_FILE or NATS_CREDS_FILE',
  user: 'check NATS_USER and NATS_PASSWORD against the users of the server configuration (deploy/nats/server.example.conf shows the layout)',
  token: "check that NATS_TOKEN matches the server's authorization token",
  nkey: "check that the seed's public key (nk -inkey <seed file> -pubout) is listed under the server's users",
  creds:
    "check that the .creds file was issued for this server's operator and account and has not expired (nsc describe user)",
};

async function readSecretFile(path: string, variable: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : (err as Error).message;
    throw new DuraError(
      'nats_credentials_unreadable',
      `${variable}=${path}: the file ${reason}; fix the path or the file's permissions`,
      {
        cause: err,
      },
    );
  }
}

async function readSeed(path: string): Promise<Uint8Array> {
  const seed = (await readSecretFile(path, 'NATS_NKEY_SEED_FILE')).trim();
  try {
    const pair = nkeys.fromSeed(new TextEncoder().encode(seed));
    if (!pair.getPublicKey().startsWith('U')) throw new Error('not a user seed');
  } catch {
    // The seed's text is a secret: the message names the file, never its content.
    throw new DuraError(
      'nats_credentials_invalid',
      `NATS_NKEY_SEED_FILE=${path}: not a user nkey seed (one line starting with "SU", as \`nk -gen user\` prints)`,
    );
  }
  return new TextEncoder().encode(seed);
}

async function readCreds(path: string): Promise<Uint8Array> {
  const text = await readSecretFile(path, 'NATS_CREDS_FILE');
  if (!/-----BEGIN NATS USER JWT-----/.test(text) || !/-----BEGIN USER NKEY SEED-----/.test(text))
    throw new DuraError(
      'nats_credentials_invalid',
      `NATS_CREDS_FILE=${path}: not a NATS credentials file (it needs a "NATS USER JWT" and a "USER NKEY SEED" block, as \`nsc generate creds\` writes)`,
    );
  return new TextEncoder().encode(text);
}

async function readPem(path: string, variable: string, kind: 'CERTIFICATE' | 'PRIVATE KEY'): Promise<string> {
  const text = await readSecretFile(path, variable);
  if (!new RegExp(`-----BEGIN [A-Z ]*${kind}-----`).test(text))
    throw new DuraError(
      'nats_credentials_invalid',
      `${variable}=${path}: not a PEM ${kind.toLowerCase()} file`,
    );
  return text;
}
