import { eq, inArray, sql } from 'drizzle-orm';
import { ContractViolation, runIdFromSubject, type RunEvent } from '@dura/contracts';
import { evolve, initialRunState, type RunState } from '@dura/core';
import type { Db } from '@dura/db';
import { decodeStored } from '@dura/event-store';
import { failpoint } from '@dura/service-kit';
import { checkpoints, projectionErrors, runEvents, runs } from './db/schema';

export interface StreamMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
}

export const RUNS_CHECKPOINT = 'DURA_RUNS';

/** The projection's stored position in the run stream (0 before the first event). */
export async function readCheckpoint(db: Db): Promise<number> {
  const [row] = await db.select().from(checkpoints).where(eq(checkpoints.name, RUNS_CHECKPOINT));
  return row?.lastSeq ?? 0;
}

/**
 * Applies a contiguous batch of stream messages in ONE transaction with the checkpoint (DESIGN invariant 6).
 * Messages at or below the stored checkpoint are skipped, so a redelivered batch, or a second projector
 * replica racing this one, changes nothing. Returns the checkpoint after the batch.
 */
export async function applyBatch(
  db: Db,
  batch: readonly StreamMessage[],
): Promise<{ checkpoint: number; applied: number }> {
  if (batch.length === 0) return { checkpoint: await readCheckpoint(db), applied: 0 };
  return db.transaction(async (tx) => {
    await tx.insert(checkpoints).values({ name: RUNS_CHECKPOINT, lastSeq: 0 }).onConflictDoNothing();
    const [position] = await tx
      .select()
      .from(checkpoints)
      .where(eq(checkpoints.name, RUNS_CHECKPOINT))
      .for('update');
    const from = position?.lastSeq ?? 0;
    const fresh = batch.filter((msg) => msg.seq > from);
    if (fresh.length === 0) return { checkpoint: from, applied: 0 };

    const runIds = [
      ...new Set(
        fresh.map((msg) => runIdFromSubject(msg.subject)).filter((id): id is string => id !== undefined),
      ),
    ];
    const existing =
      runIds.length === 0
        ? []
        : await tx
            .select({ runId: runs.runId, state: runs.state })
            .from(runs)
            .where(inArray(runs.runId, runIds));
    const states = new Map<string, RunState>(existing.map((row) => [row.runId, row.state as RunState]));
    const eventRows: (typeof runEvents.$inferInsert)[] = [];
    const errorRows: (typeof projectionErrors.$inferInsert)[] = [];

    for (const msg of fresh) {
      const runId = runIdFromSubject(msg.subject);
      let event: RunEvent;
      try {
        event = decodeStored(msg);
        // The subject is the run's log: an event naming another run must not touch that run's state.
        if (event.meta.runId !== runId) {
          const where = `event at seq ${msg.seq} names run ${event.meta.runId}`;
          throw new ContractViolation(`${where} but was appended to ${msg.subject}`);
        }
        const next = evolve(states.get(event.meta.runId) ?? initialRunState(), event);
        states.set(event.meta.runId, next);
      } catch (err) {
        const e = err as { code?: string; message: string };
        errorRows.push({
          seq: msg.seq,
          runId: runId ?? null,
          code: e.code ?? 'projection_error',
          message: e.message,
        });
        continue;
      }
      eventRows.push({ seq: event.seq, runId: event.meta.runId, type: event.type, event, ts: event.meta.ts });
    }

    if (eventRows.length > 0) await tx.insert(runEvents).values(eventRows).onConflictDoNothing();
    failpoint('projector.mid-batch');
    if (errorRows.length > 0) await tx.insert(projectionErrors).values(errorRows).onConflictDoNothing();
    const touched = new Set(eventRows.map((row) => row.runId));
    for (const runId of touched) {
      const state = states.get(runId) as RunState;
      const row = {
        runId,
        status: state.status,
        state,
        lastSeq: state.lastSeq,
        eventCount: state.eventCount,
        steps: state.steps,
        createdAt: state.createdAt,
        updatedAt: state.updatedAt,
      };
      await tx
        .insert(runs)
        .values(row)
        .onConflictDoUpdate({ target: runs.runId, set: { ...row, runId: sql`excluded.run_id` } });
    }
    const checkpoint = (fresh.at(-1) as StreamMessage).seq;
    await tx.update(checkpoints).set({ lastSeq: checkpoint }).where(eq(checkpoints.name, RUNS_CHECKPOINT));
    return { checkpoint, applied: fresh.length };
  });
}
