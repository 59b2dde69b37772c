// C: what a replica that has never seen a run pays to take its next decision: a fresh driver (empty cache)
// loads the snapshot and the log's tail (or the whole log), folds, asks the model, appends and dispatches.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { newEvent, type RunEvent } from '@dura/contracts';
import { createEventStore, ensureStreams, DEFAULT_STREAM_OPTIONS, type EventStore } from '@dura/event-store';
import { createScriptedModel } from '@dura/agents';
import { createRunDriver, openSnapshotBucket } from '@dura/planner';
import { createLogger } from '@dura/service-kit';
import { startNatsServer } from '@dura/testing';
import { openRunLog, publishEvents } from '../log-builder';
import { progress } from '../progress';
import type { BenchScenarios } from '../schema';
import { round } from '../stats';

const log = createLogger({ service: 'bench-resume', level: 'error', write: () => undefined });

/** Records the outcome of the run's open call, as the gateway's relay would. */
async function completeOpenCall(store: EventStore, runId: string, lastSeq: number): Promise<void> {
  const [intent] = (await store.read(runId, { fromSeq: lastSeq })) as [RunEvent | undefined];
  if (intent?.type !== 'tool_call_requested')
    throw new Error(`run ${runId} has no open call at seq ${lastSeq}`);
  const data = {
    callId: intent.data.callId,
    idempotencyKey: intent.data.idempotencyKey,
    result: { step: intent.data.step },
    attempt: 1,
    deduped: false,
    durationMs: 0,
  };
  const meta = {
    id: `${intent.data.idempotencyKey}:result`,
    runId,
    ts: new Date().toISOString(),
    correlationId: runId,
  };
  await store.append(runId, [newEvent('tool_call_completed', data, meta)], { expectedSeq: 'any' });
}

export async function resumeCost(sizes: {
  resumeEvents: number[];
  resumeRepeats: number;
}): Promise<NonNullable<BenchScenarios['resume']>> {
  await using nats = await startNatsServer();
  const nc = await connect({ servers: nats.url, name: 'dura-bench-resume' });
  try {
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, DEFAULT_STREAM_OPTIONS);
    await openSnapshotBucket(js);
    const store = createEventStore({ js, jsm });
    const fresh = (snapshots: boolean) =>
      createRunDriver({
        store,
        js,
        model: createScriptedModel(),
        log,
        clock: () => new Date(),
        ...(snapshots ? {} : { snapshots: false as const }),
      });
    const cases: NonNullable<BenchScenarios['resume']>['cases'] = [];
    for (const events of sizes.resumeEvents) {
      const steps = Math.max(1, Math.ceil((events - 2) / 3));
      for (const snapshots of [false, true]) {
        const all: number[] = [];
        for (let r = 1; r <= sizes.resumeRepeats; r += 1) {
          const runId = `resume-${events}-${snapshots ? 'snap' : 'full'}-${r}`;
          await publishEvents(js, openRunLog(runId, steps, steps + 2).events);
          if (snapshots) {
            // A replica that ran it before: took a snapshot on its load, decided, and the call completed since.
            const warm = fresh(true);
            const outcome = await warm.drive(runId);
            await warm.flushSnapshots();
            await completeOpenCall(store, runId, outcome.state.lastSeq);
          }
          const driver = fresh(snapshots);
          const began = performance.now();
          const outcome = await driver.drive(runId);
          all.push(round(performance.now() - began));
          if (outcome.modelCalls !== 1)
            throw new Error(`resume of ${runId} made ${outcome.modelCalls} model calls`);
        }
        const driveMs = [...all].sort((a, b) => a - b)[Math.floor(all.length / 2)] ?? 0;
        cases.push({ events: 2 + 3 * steps, snapshots, driveMs, repeats: all.length, driveMsAll: all });
        progress(`resume ${2 + 3 * steps} events, snapshots ${snapshots ? 'on' : 'off'}: ${driveMs} ms`);
      }
    }
    return {
      mode: 'in-process',
      note:
        'fresh run driver (empty cache, new snapshot store) in the bench process over a real nats-server; ' +
        'driveMs is the median of the repeats and excludes node/tsx process boot',
      cases,
    };
  } finally {
    await nc.close();
  }
}
