import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { runSubject, STREAMS } from '@dura/contracts';
import { isTerminal, type RunStatus } from '@dura/core';
import { createKvEntry, EVENT_TYPE_HEADER, getKvEntry, openKvBucket, openOnce } from '@dura/event-store';
import type { Logger } from '@dura/service-kit';
import { DuraError } from '@dura/contracts';

/** tenant → the runs admitted and perhaps still in flight; shared by every planner replica. */
export const TENANT_RUNS_BUCKET = 'dura_tenant_runs';

const TERMINAL_EVENTS = new Set(['run_completed', 'run_failed', 'run_cancelled', 'run_rejected']);
const MAX_CAS_ATTEMPTS = 20;

/** runId → when it was admitted (ms since the epoch). */
type Admitted = Record<string, number>;

export type Admission = { admitted: true } | { admitted: false; inFlight: number };

export interface TenantAdmission {
  /** Takes a slot of `tenant` for `runId` when it has fewer than `limit` runs in flight; idempotent per run. */
  admit(tenant: string, runId: string, limit: number): Promise<Admission>;
}

/**
 * The bucket holds no lease and nothing that must be released: a member is a run that was admitted, and it
 * stops counting once its log says it ended. Members are checked against the log only when a tenant looks
 * full, so a slot never leaks (a crash between admission and the run's end leaves a member that the next
 * full check prunes). Every write is a compare-and-set on the key's revision, so two replicas can never
 * both take the last slot.
 */
export function createTenantAdmission(deps: {
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** The run's status folded from its log (the planner's cached load). */
  statusOf: (runId: string) => Promise<RunStatus>;
  log: Logger;
  replicas?: number;
  clock?: () => number;
  /** A member whose run has no event yet counts for this long (its request may still be on the way to the log). */
  unstartedGraceMs?: number;
}): TenantAdmission {
  const clock = deps.clock ?? Date.now;
  const graceMs = deps.unstartedGraceMs ?? 60_000;
  // Runs seen in flight at a log sequence: while their last sequence is unchanged they need no fold again.
  const inFlightAt = new Map<string, number>();

  const open = openOnce(() =>
    openKvBucket(deps.js, TENANT_RUNS_BUCKET, {
      replicas: deps.replicas,
      description: 'Dura runs admitted per tenant (pruned against the run log when a tenant looks full)',
    }),
  );

  async function lastEvent(runId: string): Promise<{ seq: number; type: string | undefined } | null> {
    const msg = await deps.jsm.streams.getMessage(STREAMS.runs, { last_by_subj: runSubject(runId) });
    return msg ? { seq: msg.seq, type: msg.header?.get(EVENT_TYPE_HEADER) || undefined } : null;
  }

  /** Whether a member still takes a slot: its run has not ended (or has not reached the log within the grace). */
  async function holds(runId: string, admittedAt: number): Promise<boolean> {
    const last = await lastEvent(runId);
    if (!last) return clock() - admittedAt < graceMs;
    if (last.type && TERMINAL_EVENTS.has(last.type)) return false;
    if (inFlightAt.get(runId) === last.seq) return true;
    // An event may follow the terminal one (a late observation): the folded status decides.
    const ended = isTerminal(await deps.statusOf(runId));
    if (ended) inFlightAt.delete(runId);
    else {
      if (inFlightAt.size > 10_000) inFlightAt.clear();
      inFlightAt.set(runId, last.seq);
    }
    return !ended;
  }

  async function prune(members: Admitted): Promise<Admitted> {
    const kept: Admitted = {};
    const checks = Object.entries(members).map(async ([runId, at]) => {
      if (await holds(runId, at)) kept[runId] = at;
    });
    await Promise.all(checks);
    return kept;
  }

  /** Compare-and-set: false when another replica wrote the key first (the caller reads it again). */
  async function write(
    kv: KV,
    tenant: string,
    members: Admitted,
    revision: number | undefined,
  ): Promise<boolean> {
    const value = JSON.stringify(members);
    try {
      if (revision === undefined) await createKvEntry(kv, tenant, value);
      else await kv.update(tenant, value, revision);
      return true;
    } catch (err) {
      deps.log.debug('tenant runs changed meanwhile; reading again', { tenant, err: (err as Error).message });
      return false;
    }
  }

  return {
    async admit(tenant, runId, limit) {
      const kv = await open();
      for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
        const entry = await getKvEntry(kv, tenant);
        const live = entry?.operation === 'PUT' && entry.length > 0;
        const members: Admitted = live ? entry.json<Admitted>() : {};
        const revision = entry ? entry.revision : undefined;
        if (runId in members) return { admitted: true };
        let current = members;
        if (Object.keys(current).length >= limit) {
          current = await prune(members);
          // A redelivered request of a run that already started (and perhaps ended) is not a new run.
          if (Object.keys(current).length >= limit && (await lastEvent(runId)) !== null)
            return { admitted: true };
        }
        const full = Object.keys(current).length >= limit;
        const next = full ? current : { ...current, [runId]: clock() };
        const changed = Object.keys(next).length !== Object.keys(members).length || !full;
        if (changed && !(await write(kv, tenant, next, revision))) continue;
        return full ? { admitted: false, inFlight: Object.keys(current).length } : { admitted: true };
      }
      throw new DuraError(
        'tenant_runs_contended',
        `tenant ${tenant}: its runs in flight changed on each of ${MAX_CAS_ATTEMPTS} tries (many replicas admitting at once); the request is retried`,
        { retryable: true },
      );
    },
  };
}
