import { DeliverPolicy, type JetStreamClient, type ConsumerMessages } from '@nats-io/jetstream';
import { STREAMS, SUBJECTS } from '@dura/contracts';
import type { Db } from '@dura/db';
import { ensureStreams, DEFAULT_STREAM_OPTIONS, type StreamOptions } from '@dura/event-store';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '@dura/service-kit';
import { applyBatch, readCheckpoint, type StreamMessage } from './projection';

export interface ProjectorDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  db: Db;
  log: Logger;
  batchSize?: number;
  streams?: StreamOptions;
}

/**
 * Folds every run event into Postgres. Reads the run stream in order from its stored checkpoint with an
 * ordered consumer (no acks to lose: the checkpoint in Postgres is the only position), and applies batches
 * in one transaction each, flushing whenever it has caught up with the stream.
 */
export function createProjector(deps: ProjectorDeps) {
  const batchSize = deps.batchSize ?? 500;
  let messages: ConsumerMessages | undefined;
  let loop: Promise<void> | undefined;
  let stopping = false;
  let position = 0;

  async function applyWithRetry(batch: StreamMessage[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        position = (await applyBatch(deps.db, batch)).checkpoint;
        return;
      } catch (err) {
        if (stopping) throw err;
        deps.log.warn('projection batch failed; retrying', { attempt, firstSeq: batch[0]?.seq, err });
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 200 * attempt)));
      }
    }
  }

  async function run(source: ConsumerMessages): Promise<void> {
    let batch: StreamMessage[] = [];
    for await (const msg of source) {
      batch.push({ seq: msg.seq, subject: msg.subject, data: msg.data });
      if (batch.length >= batchSize || msg.info.pending === 0) {
        await applyWithRetry(batch);
        batch = [];
      }
    }
  }

  return {
    /** Stream sequence up to which the read model is complete. */
    position: () => position,
    async start(): Promise<void> {
      await ensureStreams(deps.jsm, deps.streams ?? DEFAULT_STREAM_OPTIONS);
      position = await readCheckpoint(deps.db);
      const consumer = await deps.js.consumers.get(STREAMS.runs, {
        filter_subjects: SUBJECTS.allRuns,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: position + 1,
      });
      messages = await consumer.consume({ max_messages: Math.max(batchSize, 100) });
      loop = run(messages).catch((err: unknown) => {
        if (!stopping) deps.log.error('projection loop ended', { err });
      });
      deps.log.info('projector started', { fromSeq: position + 1 });
    },
    async stop(): Promise<void> {
      stopping = true;
      await messages?.close();
      await loop;
    },
  };
}

export type Projector = ReturnType<typeof createProjector>;
