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
import { isJsApiError, JS_CODES } from './jetstream-errors';

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

/** The four streams of the wire layout (DESIGN.md). Runs are kept forever: the log is the truth. */
export type NamedStreamConfig = Partial<StreamConfig> & { name: string };

export function streamConfigs(options: StreamOptions): NamedStreamConfig[] {
  const common = {
    num_replicas: options.replicas,
    storage: options.storage === 'file' ? StorageType.File : StorageType.Memory,
    duplicate_window: nanos(options.duplicateWindowMs),
    discard: DiscardPolicy.Old,
  };
  return [
    {
      ...common,
      name: STREAMS.requests,
      subjects: [SUBJECTS.submit, SUBJECTS.signal, SUBJECTS.fork],
      retention: RetentionPolicy.Limits,
      max_age: nanos(7 * DAY_MS),
    },
    {
      ...common,
      name: STREAMS.runs,
      subjects: [SUBJECTS.allRuns],
      retention: RetentionPolicy.Limits,
      allow_direct: true,
      deny_delete: true,
    },
    { ...common, name: STREAMS.tasks, subjects: ['dura.task.>'], retention: RetentionPolicy.Workqueue },
    {
      ...common,
      name: STREAMS.deadLetters,
      subjects: [SUBJECTS.allDeadLetters],
      retention: RetentionPolicy.Limits,
      max_age: nanos(30 * DAY_MS),
    },
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
    if (!isJsApiError(err, JS_CODES.streamNotFound)) {
      throw new StreamUnavailable(`cannot read stream ${name}: ${(err as Error).message}`, err);
    }
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
    if (needsUpdate(existing, config)) await jsm.streams.update(name, { ...existing, ...config });
  } catch (err) {
    if (err instanceof StreamMisconfigured) throw err;
    // Another replica may have created it between our info and add.
    if (existing === undefined && (await streamExists(jsm, name))) return;
    throw new StreamUnavailable(`cannot create or update stream ${name}: ${(err as Error).message}`, err);
  }
}

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
