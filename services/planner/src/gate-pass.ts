import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { SUBJECTS, type GateRecord } from '@dura/contracts';
import { closeWindow, firingDone, isDue, isIdle, IDLE_RECORD_MS } from '@dura/core';
import type { GateEntry, RunGates } from '@dura/event-store';
import { duraMeter, failpoint, type Logger } from '@dura/service-kit';
import { DURA_METRICS, declareCounter } from '@dura/telemetry';
import { createClaimWatch, DEFAULT_CLAIM_TIMEOUT_MS } from './schedule-claims';
import { createRecordSweep } from './record-sweep';

export interface GatePassDeps {
  js: JetStreamClient;
  gates: RunGates;
  log: Logger;
  /** The revision of trigger `id` now (undefined: deleted): a window of another revision starts nothing. */
  triggerRevision: (id: string) => Promise<number | undefined>;
  /** How often each replica looks at the open windows, on average (default 250 ms). */
  pollMs?: number;
  /** A firing another replica claimed and left unchanged this long is carried out here (default 5 s). */
  claimTimeoutMs?: number;
  replicaId?: string;
  monotonic?: () => number;
}

const MAX_CLEAR_ATTEMPTS = 10;
const TRIGGER_SCOPE = 'trigger:';

/**
 * Ends debounce windows, on every planner replica: a due window is closed by compare-and-set (it becomes a
 * firing: start its run, or skip it because skip-if-running found the key's run in flight) before anything is
 * published, so exactly one replica closes it; that replica then publishes the run request under the window's
 * fixed run id and clears the firing. A replica killed in between leaves the firing in the record, and another
 * carries it out once it stayed unchanged for `claimTimeoutMs` of its own clock (publishing twice is harmless:
 * the run id is the msg-id). Waiting holds nothing per window: a window is a KV entry, read on each pass.
 */
export function createGatePass(deps: GatePassDeps) {
  const me = deps.replicaId ?? `replica-${randomUUID().slice(0, 8)}`;
  const claims = createClaimWatch({
    timeoutMs: deps.claimTimeoutMs ?? DEFAULT_CLAIM_TIMEOUT_MS,
    monotonic: deps.monotonic ?? (() => performance.now()),
  });
  const skipped = declareCounter(duraMeter(), DURA_METRICS.gateSkipped);
  const { gates, log } = deps;

  /** Publishes (or, for a skip, logs) the firing of `entry`, then clears it from the record. */
  async function carryOut(entry: GateEntry): Promise<void> {
    const firing = entry.record.firing;
    if (!firing) return;
    const { scope, key } = entry.record;
    if (firing.outcome === 'start') {
      await deps.js.publish(SUBJECTS.submit, JSON.stringify(firing.request), { msgID: firing.runId });
      log.info('debounce window ended: run started with its last input', {
        scope,
        key,
        runId: firing.runId,
        events: firing.events,
        dropped: firing.events - 1,
      });
    } else {
      skipped.add(1, { scope });
      log.info('debounce window ended: run not started, a run of its key is in flight (skip-if-running)', {
        scope,
        key,
        runId: firing.runId,
        running: firing.runningRunId,
        events: firing.events,
      });
    }
    claims.forget(claimId(entry.name, firing.runId));
    let current: GateEntry | undefined = entry;
    for (let attempt = 0; attempt < MAX_CLEAR_ATTEMPTS && current; attempt += 1) {
      const next = firingDone(current.record, firing.runId);
      if (next === current.record) return;
      if ((await gates.compareAndSet(entry.name, next, current.revision)) !== undefined) return;
      current = await gates.read(entry.name); // an event opened the next window meanwhile
    }
  }

  /** A window of a trigger deleted (or made again) since it opened: dropped, nothing starts. */
  async function orphaned(record: GateRecord): Promise<boolean> {
    const revision = record.window?.triggerRevision;
    if (revision === undefined || !record.scope.startsWith(TRIGGER_SCOPE)) return false;
    return (await deps.triggerRevision(record.scope.slice(TRIGGER_SCOPE.length))) !== revision;
  }

  async function visit(name: string): Promise<boolean> {
    const entry = await gates.read(name);
    if (!entry) return false;
    const { record, revision } = entry;
    const now = gates.clock();
    const firing = record.firing;
    if (firing) {
      if (firing.claimedBy === me || claims.abandoned(claimId(name, firing.runId), 0)) await carryOut(entry);
      return true;
    }
    if (isDue(record, now)) {
      if (await orphaned(record)) {
        const { window, ...rest } = record;
        if ((await gates.compareAndSet(name, { ...rest, updatedAt: now }, revision)) !== undefined)
          log.info('debounce window dropped: its trigger was deleted or replaced', {
            scope: record.scope,
            key: record.key,
            runId: window?.runId,
          });
        return true;
      }
      const inFlight = record.window?.skipIfRunning ? await gates.inFlight(record, now) : undefined;
      const closed = closeWindow(record, now, inFlight, me);
      const written = await gates.compareAndSet(name, closed, revision);
      if (written === undefined) return true; // another replica closed it, or an event extended it
      failpoint('planner.gate-after-close');
      await carryOut({ name, record: closed, revision: written });
      return true;
    }
    if (record.window === undefined && now - record.updatedAt >= IDLE_RECORD_MS) {
      if (isIdle(record, now, await gates.inFlight(record, now))) await gates.remove(name, revision);
    }
    return true;
  }

  const sweep = createRecordSweep({
    listKeys: () => gates.names(),
    visit,
    pollMs: deps.pollMs ?? 250,
    log,
    keyField: 'entry',
    visitFailed: 'debounce window not handled; retried on the next pass',
    passFailed: 'debounce windows unreadable; retried on the next pass',
  });

  return {
    /** One pass over every gate record (tests). */
    pass: sweep.pass,
    start: sweep.start,
    stop: sweep.stop,
  };
}

const claimId = (name: string, runId: string): string => `${name}:${runId}`;

export type GatePass = ReturnType<typeof createGatePass>;
