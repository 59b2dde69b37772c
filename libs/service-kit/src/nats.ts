import type { NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { describeNatsAuth, DuraError, type NatsSecurity } from '@dura/contracts';
import { explainPermissionViolation, isJetStreamNotReady, openNatsConnection } from '@dura/event-store';
import type { Logger } from './logger';
import { waitUntilReachable, type StartWaitOptions } from './start-wait';

export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** How often a service pings its NATS server, and how many unanswered pings make it reconnect elsewhere. */
export const NATS_PING_INTERVAL_MS = 5_000;
export const NATS_MAX_PINGS_OUT = 3;

/**
 * Connects and keeps reconnecting for as long as the process lives: a broker restart must not kill a service.
 * The first connection fails fast with a message that says what to check, unless `waitForServer` is given:
 * then an unreachable server, or a JetStream cluster still electing its meta leader, is retried with backoff
 * (a service started before its broker waits, not ready), while bad credentials or TLS still fail at once.
 * `security` (from `loadNatsSecurity`) carries the credentials and TLS settings; unset: an open server.
 */
export async function connectNats(
  url: string,
  name: string,
  log?: Logger,
  security?: NatsSecurity,
  options: { waitForServer?: StartWaitOptions } = {},
): Promise<NatsHandles> {
  const open = async (): Promise<NatsHandles> => {
    const nc = await openNatsConnection({
      url,
      name,
      ...(security ? { security } : {}),
      connect: {
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        timeout: 5000,
        // A server cut off by a partition does not close the socket: without pings answered, the client
        // would wait the default 2 × 2 min before it moves to another node of the cluster. Here it leaves
        // within ~15-20 s, and a healthy connection pays one ping every 5 s.
        pingInterval: NATS_PING_INTERVAL_MS,
        maxPingOut: NATS_MAX_PINGS_OUT,
        // Async traces capture a stack trace for every request (each JetStream publish is one): a fifth of
        // the planner's CPU under load. Errors still say what failed; they only lose the caller's frames.
        noAsyncTraces: true,
      },
    });
    const jsm = await jetstreamManager(nc, { timeout: 10_000 }).catch((err: unknown) => {
      void nc.close();
      throw jetStreamStartError(err, url, security);
    });
    return { nc, js: jetstream(nc, { timeout: 10_000 }), jsm };
  };
  const handles = await (options.waitForServer
    ? waitUntilReachable(`NATS at ${url}`, open, options.waitForServer)
    : open());
  if (log) {
    void logStatus(handles.nc, log, security);
    log.info('nats connected', {
      server: handles.nc.getServer(),
      as: describeNatsAuth(security?.auth ?? { kind: 'none' }),
    });
  }
  return handles;
}

/**
 * Why JetStream could not be used on a connected server. A cluster still electing its meta leader is worth
 * waiting for (retryable); a denied subject or a server without JetStream is not.
 */
function jetStreamStartError(err: unknown, url: string, security: NatsSecurity | undefined): DuraError {
  const denied = explainPermissionViolation(err, security);
  if (denied) return new DuraError('nats_permission_denied', denied, { cause: err });
  if (isJetStreamNotReady(err))
    return new DuraError(
      'jetstream_not_ready',
      `NATS at ${url} answers, but its JetStream is not ready (${(err as Error).message}): a cluster still ` +
        'electing its meta leader, or too few of its servers up',
      { retryable: true, cause: err },
    );
  return new DuraError(
    'jetstream_disabled',
    `NATS at ${url} has no JetStream; start it with -js (${(err as Error).message})`,
    { cause: err },
  );
}

async function logStatus(nc: NatsConnection, log: Logger, security: NatsSecurity | undefined): Promise<void> {
  for await (const status of nc.status()) {
    if (status.type === 'disconnect' || status.type === 'reconnect')
      log.warn(`nats ${status.type}`, { server: status.server });
    if (status.type === 'error') {
      // A denied publish or subscribe arrives here, not at the caller: say which and what to check.
      const denied = explainPermissionViolation(status.error, security);
      log.error(denied ?? `nats error: ${status.error.message}`, { err: status.error });
    }
  }
}
