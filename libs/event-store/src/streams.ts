import {
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { STREAMS, SUBJECTS } from '@dura/contracts';
import { StreamMisconfigured, StreamUnavailable } from './errors';
import { isJetStreamRefusal, isJsApiError, JS_CODES } from './jetstream-errors';

export interface StreamOptions {
  /** R1 on a single server; R3 in production clusters. */
  replicas: number;
  /** JetStream's msg-id dedupe window. The effect ledger, not this window, is what guarantees one effect per key. */
  duplicateWindowMs: number;
  storage: 'file' | 'memory';
}

export const DEFAULT_STREAM_OPTIONS: StreamOptions = {
  replicas: 1,
  duplicateWindowMs: 120_000,
  storage: 'file',
};

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Consumers each stream may hold. The services need a handful of durables on the intake and task streams;
 * on the run log, one ordered consumer per projector replica plus short-lived read consumers of the planner
 * and the projector's time travel (deleted after each read). The limits only stop a leak or a hostile
 * credential from piling up consumers on the server. nats-server 2.9 and 2.10 refuse to change the limit of
 * an existing stream, so a stream created without it keeps none (docs/security/nats-consumers.md).
 */
export const MAX_CONSUMERS = { requests: 32, runs: 512, tasks: 64, deadLetters: 16, tokens: 16 } as const;

/**
 * Live model text is kept long enough for a reader to reconnect (a reload, a network change, a redeploy of the
 * projector), and no longer: it is never needed to rebuild a run, whose thought records the answer. The byte
 * limit bounds the server's disk whatever the traffic; the oldest text goes first, and a reader that asks for
 * text gone is told (`gap`) and gets the recorded answer once the thought is in the log.
 */
export const TOKEN_RETENTION = {
  maxAgeMs: 15 * 60 * 1000,
  maxBytes: 512 * 1024 * 1024,
  maxMsgSize: 128 * 1024,
};

/**
 * The streams of the wire layout (DESIGN.md). Runs are kept forever: the log is the truth. `DURA_TOKENS` takes
 * the deployment's storage (file in production): its sequences then survive a server restart, so a reader's
 * cursor never points into a stream that started again from 1 and silently skips text.
 */
export type NamedStreamConfig = Partial<StreamConfig> & { name: string };

export function streamConfigs(options: StreamOptions): NamedStreamConfig[] {
  const common = {
    num_replicas: options.replicas,
    storage: options.storage === 'file' ? StorageType.File : StorageType.Memory,
    duplicate_window: nanos(options.duplicateWindowMs),
    discard: DiscardPolicy.Old,
  };
  /** The stream `key` names (`STREAMS`), on `subjects`, with its consumer limit and the settings it adds. */
  const stream = (
    key: keyof typeof MAX_CONSUMERS,
    subjects: string[],
    config: Partial<StreamConfig>,
  ): NamedStreamConfig => ({
    ...common,
    name: STREAMS[key],
    subjects,
    ...config,
    max_consumers: MAX_CONSUMERS[key],
  });
  return [
    stream('requests', [SUBJECTS.submit, SUBJECTS.signal, SUBJECTS.fork], {
      retention: RetentionPolicy.Limits,
      max_age: nanos(7 * DAY_MS),
    }),
    stream('runs', [SUBJECTS.allRuns], {
      retention: RetentionPolicy.Limits,
      allow_direct: true,
      deny_delete: true,
    }),
    stream('tasks', ['dura.task.>'], { retention: RetentionPolicy.Workqueue }),
    stream('deadLetters', [SUBJECTS.allDeadLetters], {
      retention: RetentionPolicy.Limits,
      max_age: nanos(30 * DAY_MS),
    }),
    stream('tokens', [SUBJECTS.allTokens], {
      retention: RetentionPolicy.Limits,
      max_age: nanos(TOKEN_RETENTION.maxAgeMs),
      max_bytes: TOKEN_RETENTION.maxBytes,
      max_msg_size: TOKEN_RETENTION.maxMsgSize,
      duplicate_window: nanos(Math.min(options.duplicateWindowMs, TOKEN_RETENTION.maxAgeMs)),
      // Read by message get, as the run log is: readers need no consumer.
      allow_direct: true,
    }),
  ];
}

/** Creates the streams, or updates them in place when their settings changed. Safe to call from every replica. */
export async function ensureStreams(
  jsm: JetStreamManager,
  options: StreamOptions = DEFAULT_STREAM_OPTIONS,
): Promise<void> {
  for (const config of streamConfigs(options)) {
    await ensureStream(jsm, config);
  }
}

async function ensureStream(jsm: JetStreamManager, config: NamedStreamConfig): Promise<void> {
  const name = config.name;
  let existing: StreamConfig | undefined;
  try {
    existing = (await jsm.streams.info(name)).config;
  } catch (err) {
    if (!isJsApiError(err, JS_CODES.streamNotFound)) throw streamError(`cannot read stream ${name}`, err);
  }
  try {
    if (existing === undefined) {
      await jsm.streams.add(config);
      return;
    }
    if (existing.retention !== config.retention) {
      throw new StreamMisconfigured(
        `stream ${name} has retention "${existing.retention}" but Dura needs "${config.retention}"; ` +
          'it cannot be changed in place: back up and delete the stream, then restart',
      );
    }
    // The server refuses to change max_consumers in place: an existing stream keeps its own.
    const wanted = { ...config, max_consumers: existing.max_consumers };
    if (needsUpdate(existing, wanted)) await jsm.streams.update(name, { ...existing, ...wanted });
  } catch (err) {
    if (err instanceof StreamMisconfigured) throw err;
    // Another replica may have created it between our info and add.
    if (existing === undefined && (await streamExists(jsm, name))) return;
    throw streamError(`cannot create or update stream ${name}`, err);
  }
}

/**
 * What JetStream refused for good (R3 asked of a single server, a denied subject) needs an operator, and
 * waiting would only hide it. A cluster still forming (no meta leader yet, peers not yet known for
 * placement), a timeout or a dropped connection is worth waiting for: retryable.
 */
function streamError(what: string, err: unknown): StreamUnavailable | StreamMisconfigured {
  const message = `${what}: ${(err as Error).message}`;
  if (isJetStreamRefusal(err)) return new StreamMisconfigured(`${message}; ${STREAM_ADVICE}`, err);
  return new StreamUnavailable(message, err);
}

const STREAM_ADVICE =
  'check that NATS_URL points at a JetStream server or cluster, that DURA_STREAM_REPLICAS is no more than its ' +
  'number of JetStream servers (1 for a single server), and that this user may manage the DURA_* streams ' +
  '(deploy/nats/permissions.conf)';

function needsUpdate(existing: StreamConfig, wanted: Partial<StreamConfig>): boolean {
  return (Object.keys(wanted) as (keyof StreamConfig)[]).some(
    (key) => JSON.stringify(existing[key]) !== JSON.stringify(wanted[key]),
  );
}

async function streamExists(jsm: JetStreamManager, name: string): Promise<boolean> {
  try {
    await jsm.streams.info(name);
    return true;
  } catch {
    return false;
  }
}
