import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { asc, inArray, isNull } from 'drizzle-orm';
import { SUBJECTS, TASK_VERSION, type DecideTask, type NewEvent } from '@dura/contracts';
import type { Db } from '@dura/db';
import { EVENT_TYPE_HEADER } from '@dura/event-store';
import { failpoint, type Logger } from '@dura/service-kit';
import { outbox } from './db/schema';

export interface RelayOptions {
  db: Db;
  js: JetStreamClient;
  log: Logger;
  /** Safety-net polling interval; commits in this process wake the relay at once. */
  pollMs?: number;
  batchSize?: number;
}

/**
 * Publishes outbox rows to the run logs with the observation's msg-id, nudges the planner with a decide
 * task, then marks the rows sent. A crash between publish and mark re-publishes, and JetStream drops the
 * duplicate. Rows are locked `FOR UPDATE SKIP LOCKED`, so several gateway replicas can relay side by side.
 */
export function createRelay(options: RelayOptions) {
  const { db, js, log } = options;
  const pollMs = options.pollMs ?? 250;
  const batchSize = options.batchSize ?? 100;
  let running = false;
  let woken = false;
  let wakeUp: (() => void) | undefined;
  let loop: Promise<void> | undefined;

  async function relayOnce(): Promise<number> {
    return db.transaction(async (tx) => {
      const rows = await tx
        .select()
        .from(outbox)
        .where(isNull(outbox.sentAt))
        .orderBy(asc(outbox.id))
        .limit(batchSize)
        .for('update', { skipLocked: true });
      for (const row of rows) {
        const event = row.payload as NewEvent;
        const headers = natsHeaders();
        headers.set(EVENT_TYPE_HEADER, event.type);
        if (event.meta.trace) headers.set('traceparent', event.meta.trace);
        const ack = await js.publish(row.subject, JSON.stringify(event), { msgID: row.msgId, headers });
        const task: DecideTask = {
          v: TASK_VERSION,
          runId: row.runId,
          afterSeq: ack.seq,
          reason: 'observation',
        };
        await js.publish(SUBJECTS.decideTask, JSON.stringify(task), { msgID: `${row.runId}@${ack.seq}` });
      }
      if (rows.length > 0) {
        await tx
          .update(outbox)
          .set({ sentAt: new Date() })
          .where(
            inArray(
              outbox.id,
              rows.map((row) => row.id),
            ),
          );
      }
      return rows.length;
    });
  }

  async function run(): Promise<void> {
    while (running) {
      woken = false;
      let sent = 0;
      try {
        sent = await relayOnce();
      } catch (err) {
        log.warn('relay pass failed; retrying', { err });
        await sleep(1000);
        continue;
      }
      if (sent < batchSize && !woken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wakeUp = undefined;
      }
    }
  }

  return {
    start(): void {
      running = true;
      loop = run();
    },
    wake(): void {
      woken = true;
      wakeUp?.();
    },
    relayOnce,
    async stop(): Promise<void> {
      running = false;
      wakeUp?.();
      await loop;
    },
  };
}

export type Relay = ReturnType<typeof createRelay>;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
