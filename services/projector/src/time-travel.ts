import { and, asc, eq, lte } from 'drizzle-orm';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { runSubject, type RunEvent } from '@dura/contracts';
import { causeChain, evolve, fold, type RunState } from '@dura/core';
import type { Db } from '@dura/db';
import { decodeStored, readRaw } from '@dura/event-store';
import { NotFound } from './query-params';
import { runEvents, runs } from './db/schema';

export interface TimeTravelDeps {
  db: Db;
  position: () => number;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * The run's state after its event at `at`: `fold` over its projected events with `seq <= at`. When `at` lies
 * past the projection's position, the log's events between the two are read from JetStream and folded on
 * top by the projection's own rule (an event that does not decode or apply is skipped), so the answer never
 * depends on how far the projector has got.
 */
export async function stateAt(deps: TimeTravelDeps, runId: string, at: number): Promise<RunState> {
  const position = deps.position();
  const rows = await deps.db
    .select({ event: runEvents.event })
    .from(runEvents)
    .where(and(eq(runEvents.runId, runId), lte(runEvents.seq, at)))
    .orderBy(asc(runEvents.seq));
  let state = fold(rows.map((row) => row.event as RunEvent));
  if (at > position) {
    for (const msg of await readRaw(deps.js, deps.jsm, runSubject(runId), position + 1)) {
      if (msg.seq > at) break;
      if (msg.seq <= state.lastSeq) continue;
      try {
        const event = decodeStored(msg);
        if (event.meta.runId === runId) state = evolve(state, event);
      } catch {
        // Not part of the run's state: the projection records it in projection_errors and skips it too.
      }
    }
  }
  if (state.eventCount === 0) throw await notFoundAt(deps, runId, at);
  return state;
}

async function notFoundAt(deps: TimeTravelDeps, runId: string, at: number): Promise<NotFound> {
  const [first] = await deps.db
    .select({ seq: runEvents.seq })
    .from(runEvents)
    .where(eq(runEvents.runId, runId))
    .orderBy(asc(runEvents.seq))
    .limit(1);
  if (!first) return unknownRun(deps, runId);
  return new NotFound(
    'event_not_found',
    `run ${runId} has no event at or before seq ${at}: its first event is at seq ${first.seq}; ask for at >= ${first.seq}`,
  );
}

function unknownRun(deps: TimeTravelDeps, runId: string): NotFound {
  return new NotFound(
    'run_not_found',
    `no run ${runId} in the projection (position ${deps.position()}): check the run id, or retry once the run's first event is projected`,
  );
}

/**
 * The causation chain of the run's event at `seq`: that event, then its cause, and so on back to the root, by
 * the log's causation rules (`causeChain`: `meta.causationId`, and the wait and signal that released a call).
 * Causes always come earlier in the log, so the walk reads the run's events up to `seq` once.
 */
export async function causesOf(deps: TimeTravelDeps, runId: string, seq: number): Promise<RunEvent[]> {
  const rows = await deps.db
    .select({ seq: runEvents.seq, event: runEvents.event })
    .from(runEvents)
    .where(and(eq(runEvents.runId, runId), lte(runEvents.seq, seq)))
    .orderBy(asc(runEvents.seq));
  const events = rows.map((row) => ({ ...(row.event as RunEvent), seq: row.seq }));
  if (events.at(-1)?.seq !== seq) {
    const [run] = await deps.db.select({ lastSeq: runs.lastSeq }).from(runs).where(eq(runs.runId, runId));
    if (!run) throw unknownRun(deps, runId);
    throw new NotFound(
      'event_not_found',
      `run ${runId} has no event at seq ${seq} (its events end at seq ${run.lastSeq}); take seqs from GET /runs/${runId}/events`,
    );
  }
  const bySeq = new Map(events.map((event) => [event.seq, event]));
  return causeChain(events, seq).map((s) => bySeq.get(s) as RunEvent);
}
