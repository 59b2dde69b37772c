import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import { BUCKETS, SUBJECTS, TASK_VERSION, type DecideTask, type PinnedVersion } from '@dura/contracts';
import { openKvBucket, openOnce } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';

/** Runs no planner here serves, parked until one that does comes up: runId → their pin. */
export const PARKED_BUCKET = BUCKETS.parked;

const REWATCH_PAUSE_MS = 1_000;

export interface Parking {
  /** Parks a run this planner may not decide; a planner that serves its pin picks it up. */
  park(runId: string, pinned: PinnedVersion, afterSeq: number): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface ParkedRun {
  pinned: PinnedVersion;
  afterSeq: number;
}

/**
 * Version pinning without stalls: a planner handed a run pinned to a version it does not serve acks the task
 * and parks the run in a KV bucket, instead of retrying it until it is dead-lettered. Every planner watches
 * the bucket (what is parked already, then what gets parked) and nudges the runs it serves with a fresh decide
 * task, so a run waits exactly until a planner of its version is up, holding nothing meanwhile.
 */
export function createParking(deps: {
  js: JetStreamClient;
  serves: (pinned: PinnedVersion) => boolean;
  log: Logger;
  replicas?: number;
}): Parking {
  let watching: { stop(): void } | undefined;
  let loop: Promise<void> | undefined;
  let running = false;

  const open = openOnce(() =>
    openKvBucket(deps.js, PARKED_BUCKET, {
      replicas: deps.replicas,
      description: 'Dura runs waiting for a planner that serves their pinned agent version',
    }),
  );

  async function unpark(kv: KV, entry: KvWatchEntry): Promise<void> {
    if (entry.operation !== 'PUT') return;
    const parked = entry.json<ParkedRun>();
    if (!deps.serves(parked.pinned)) return;
    const runId = entry.key;
    const task: DecideTask = { v: TASK_VERSION, runId, afterSeq: parked.afterSeq, reason: 'resume' };
    // The revision makes each nudge a new message: a run parked twice is nudged twice.
    await deps.js.publish(SUBJECTS.decideTask, JSON.stringify(task), {
      msgID: `${runId}@${parked.afterSeq}~parked-${entry.revision}`,
    });
    await kv.delete(runId, { previousSeq: entry.revision }).catch(() => undefined);
    deps.log.info('picked up a parked run', {
      runId,
      agent: `${parked.pinned.agent}@${parked.pinned.version}`,
    });
  }

  return {
    async park(runId, pinned, afterSeq) {
      const kv = await open();
      await kv.put(runId, JSON.stringify({ pinned, afterSeq } satisfies ParkedRun));
    },
    async start() {
      const kv = await open();
      running = true;
      loop = (async () => {
        // A watch that ends (a broker restart, a lost connection) is opened again: it replays what is parked.
        while (running) {
          try {
            const watch = await kv.watch();
            watching = watch;
            for await (const entry of watch) {
              await unpark(kv, entry).catch((err: unknown) =>
                deps.log.warn('could not pick up a parked run; it stays parked', { runId: entry.key, err }),
              );
            }
          } catch (err) {
            if (running) deps.log.warn('watching parked runs failed; watching again', { err });
          }
          if (running) await new Promise((resolve) => setTimeout(resolve, REWATCH_PAUSE_MS));
        }
      })();
    },
    async stop() {
      running = false;
      watching?.stop();
      await loop;
    },
  };
}
