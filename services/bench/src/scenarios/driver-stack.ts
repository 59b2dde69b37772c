// A planner's run driver over a real nats-server, in this process: what scenarios J and L drive runs with.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { PlannerModel } from '@dura/agents';
import { newEvent, type RunRequest } from '@dura/contracts';
import { createEventStore, ensureStreams, DEFAULT_STREAM_OPTIONS, type EventStore } from '@dura/event-store';
import { createRunDriver, openSnapshotBucket, type RunDriver } from '@dura/planner';
import { createLogger } from '@dura/service-kit';
import { startNatsServer } from '@dura/testing';

export interface DriverStack extends AsyncDisposable {
  store: EventStore;
  /** A fresh driver (nothing cached) deciding with `model`. */
  driverOf(model: PlannerModel): RunDriver;
  /** Appends the run's `run_requested`, as the planner's intake does. */
  request(request: RunRequest & { runId: string }): Promise<void>;
}

const log = createLogger({ service: 'bench-driver', level: 'error', write: () => undefined });

export function benchMeta(runId: string) {
  return {
    id: `${runId}:${Math.random().toString(36).slice(2)}`,
    runId,
    ts: new Date().toISOString(),
    correlationId: runId,
  };
}

export async function openDriverStack(name: string): Promise<DriverStack> {
  const nats = await startNatsServer();
  const nc = await connect({ servers: nats.url, name });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  await ensureStreams(jsm, DEFAULT_STREAM_OPTIONS);
  await openSnapshotBucket(js);
  const store = createEventStore({ js, jsm });
  return {
    store,
    driverOf: (model) => createRunDriver({ store, js, model, log, clock: () => new Date() }),
    request: async (request) => {
      const event = newEvent('run_requested', { request }, benchMeta(request.runId));
      await store.append(request.runId, [event], { expectedSeq: 0 });
    },
    async [Symbol.asyncDispose]() {
      await nc.close();
      await nats[Symbol.asyncDispose]();
    },
  };
}
