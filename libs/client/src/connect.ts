import type { NatsConnection } from '@nats-io/nats-core';
import {
  CONFIG_ERROR_CODE,
  DuraError,
  resolveNatsSecurity,
  type NatsSecurity,
  type NatsSecuritySettings,
} from '@dura/contracts';
import { createDuraClient, type DuraClient } from './client';
import type { JetStreamHandles } from './jetstream-handles';
import { NatsUnreachable } from './errors';

export interface ConnectDuraClientOptions {
  /** Default `nats://127.0.0.1:4222`. */
  natsUrl?: string;
  /** The projector's read API, for listRuns, stateAt and events. */
  apiUrl?: string;
  /** Bearer token for the read API (e.g. from DURA_API_TOKEN). */
  apiToken?: string;
  /** Connection name shown by the NATS server (default `dura-client`). */
  name?: string;
  /** How long the first connection may take, default 5 s. */
  connectTimeoutMs?: number;
  /** Credentials and TLS (see `natsSecurityFromEnv`); unset: an open server. */
  security?: NatsSecurity;
}

/**
 * The NATS credentials and TLS settings from the same environment variables the services read (NATS_USER,
 * NATS_PASSWORD, NATS_TOKEN, NATS_NKEY_SEED_FILE, NATS_CREDS_FILE, NATS_TLS_*, NATS_INBOX_PREFIX).
 */
export function natsSecurityFromEnv(env: Record<string, string | undefined> = process.env): NatsSecurity {
  const settings: NatsSecuritySettings = {};
  for (const name of SECURITY_VARIABLES) {
    const value = env[name];
    if (value !== undefined && value !== '') settings[name] = value;
  }
  const resolved = resolveNatsSecurity(settings);
  if (!resolved.ok)
    throw new DuraError(
      CONFIG_ERROR_CODE,
      `invalid NATS settings:\n${resolved.problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  return resolved.security;
}

const SECURITY_VARIABLES = [
  'NATS_USER',
  'NATS_PASSWORD',
  'NATS_TOKEN',
  'NATS_NKEY_SEED_FILE',
  'NATS_CREDS_FILE',
  'NATS_TLS_CA_FILE',
  'NATS_TLS_CERT_FILE',
  'NATS_TLS_KEY_FILE',
  'NATS_INBOX_PREFIX',
] as const satisfies readonly (keyof NatsSecuritySettings)[];

export type ConnectedDuraClient = DuraClient & {
  /** Drains and closes the NATS connection if one was opened. */
  close(): Promise<void>;
};

/**
 * A client that owns its NATS connection, opened on the first call that needs NATS (read-API calls never
 * open it) and kept reconnecting after that, so a broker restart does not end a watch.
 */
export function connectDuraClient(options: ConnectDuraClientOptions = {}): ConnectedDuraClient {
  const url = options.natsUrl ?? 'nats://127.0.0.1:4222';
  let nc: NatsConnection | undefined;
  async function open(): Promise<JetStreamHandles> {
    // NATS loads with the first call that needs it: a program that only reads the read API never loads it.
    const { jetstream, jetstreamManager, explainPermissionViolation, openNatsConnection } = await import(
      './nats-side'
    );
    try {
      nc = await openNatsConnection({
        url,
        name: options.name ?? 'dura-client',
        ...(options.security ? { security: options.security } : {}),
        connect: {
          timeout: options.connectTimeoutMs ?? 5000,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 250,
        },
      });
    } catch (err) {
      // Bad credentials, TLS or credential files are not "unreachable": keep their own code and advice.
      if (err instanceof DuraError && err.code !== 'nats_unreachable') throw err;
      throw new NatsUnreachable(url, err instanceof DuraError ? err.cause : err);
    }
    try {
      return { js: jetstream(nc), jsm: await jetstreamManager(nc, { timeout: 5000 }) };
    } catch (err) {
      await nc.close();
      const denied = explainPermissionViolation(err, options.security);
      throw new DuraError(
        denied ? 'nats_permission_denied' : 'jetstream_disabled',
        denied ??
          `NATS at ${url} answered but JetStream did not (${(err as Error).message}): start nats-server with -js`,
        { cause: err },
      );
    }
  }
  const client = createDuraClient({
    connectNats: open,
    ...(options.apiUrl === undefined ? {} : { apiUrl: options.apiUrl }),
    ...(options.apiToken === undefined ? {} : { apiToken: options.apiToken }),
  });
  return {
    ...client,
    async close() {
      if (nc && !nc.isClosed()) await nc.drain().catch(() => nc?.close());
    },
  };
}
