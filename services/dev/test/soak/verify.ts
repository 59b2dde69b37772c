import { isDeepStrictEqual } from 'node:util';
import { isControlTool, type RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { createEventStore } from '@dura/event-store';
import { lateArrivals } from '@dura/testing';
import type { Cluster } from './cluster';

export interface StuckRun {
  runId: string;
  status: string;
  /** The last events of its log, `seq type detail`. */
  lastEvents: string[];
  /** Its effect rows not finished, and its outbox rows not sent. */
  ledger: string[];
}

export interface Verdict {
  runs: number;
  completed: number;
  /** Tool calls requested across all runs. */
  steps: number;
  /** Effects beyond one per key, anywhere they could show: ledger, witness, log. Must be 0. */
  duplicates: number;
  /** pay.charge calls sent again with the same key after a crash (allowed: the witness charged once). */
  reexecutions: number;
  /**
   * Requests that reached the witness after a later attempt of their call had: sent by a paused process that
   * checked its claim before the pause, after another replica took the call over. The idempotency key keeps
   * them to one charge; only a pause can cause them, so they are problems unless `lateRequestsAllowed`.
   */
  lateRequests: number;
  /** Model calls made for these runs (the scripted model's call log). */
  modelCalls: number;
  /** Model calls whose answer was never recorded (killed in between) and so were asked again. */
  repeatedModelCalls: number;
  /** Runs whose projection differs from the fold of their log. */
  projectionMismatches: number;
  problems: string[];
  stuck: StuckRun[];
}

function describe(event: RunEvent): string {
  const data = event.data as Record<string, unknown>;
  const detail = ['step', 'tool', 'callId', 'error', 'attempt']
    .filter((key) => data[key] !== undefined)
    .map((key) => `${key}=${JSON.stringify(data[key])}`)
    .join(' ');
  return `#${event.seq} ${event.type} ${detail}`.trim();
}

async function ledgerOf(cluster: Cluster, runId: string): Promise<string[]> {
  const effects = await cluster.sql<{ idempotency_key: string; status: string; attempts: number }[]>`
    select idempotency_key, status, attempts from effects
    where run_id = ${runId} and status not in ('succeeded', 'failed')`;
  const outbox = await cluster.sql<{ id: string; msg_id: string }[]>`
    select id, msg_id from outbox where run_id = ${runId} and sent_at is null order by id`;
  return [
    ...effects.map((row) => `effect ${row.idempotency_key} ${row.status} (attempts ${row.attempts})`),
    ...outbox.map((row) => `unsent outbox #${row.id} ${row.msg_id}`),
  ];
}

async function projectionOf(cluster: Cluster, runId: string): Promise<unknown> {
  const response = await fetch(`${cluster.apiUrl}/runs/${encodeURIComponent(runId)}`);
  return response.status === 200 ? response.json() : undefined;
}

/** Waits (up to `timeoutMs` overall) for the projector to reach each run's last event; returns mismatching run ids. */
async function compareProjections(
  cluster: Cluster,
  states: Map<string, ReturnType<typeof fold>>,
  timeoutMs: number,
): Promise<{ runId: string; projected: unknown; folded: unknown }[]> {
  const deadline = Date.now() + timeoutMs;
  const pending = new Map(
    [...states].map(([runId, state]) => [runId, JSON.parse(JSON.stringify(state)) as unknown]),
  );
  const last = new Map<string, unknown>();
  while (pending.size > 0 && Date.now() < deadline) {
    for (const [runId, folded] of pending) {
      const projected = await projectionOf(cluster, runId).catch(() => undefined);
      last.set(runId, projected);
      if (isDeepStrictEqual(projected, folded)) pending.delete(runId);
    }
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return [...pending].map(([runId, folded]) => ({ runId, projected: last.get(runId), folded }));
}

/**
 * The soak's and restart tests' contract for every run: completed; exactly one effect per idempotency key in
 * the ledger and at the witness, and one recorded observation per call, matching the ledger's result; no
 * charge at the witness for a key no run asked for; and the projection equal to the fold of the log.
 */
export async function verifyRuns(
  cluster: Cluster,
  runIds: readonly string[],
  options: { projectionTimeoutMs?: number; lateRequestsAllowed?: boolean } = {},
): Promise<Verdict> {
  const store = createEventStore(cluster);
  const problems: string[] = [];
  const stuck: StuckRun[] = [];
  const states = new Map<string, ReturnType<typeof fold>>();
  const keys = new Map<string, { runId: string; tool: string; callId: string }>();
  let duplicates = 0;
  let reexecutions = 0;
  let lateRequests = 0;
  let completed = 0;

  const effectRows = await cluster.sql<
    { idempotency_key: string; run_id: string; status: string; result: unknown }[]
  >`
    select idempotency_key, run_id, status, result from effects where run_id in ${cluster.sql(runIds as string[])}`;
  const ledger = new Map(effectRows.map((row) => [row.idempotency_key, row]));

  for (const runId of runIds) {
    const log = await store.read(runId);
    const state = fold(log);
    states.set(runId, state);
    if (state.status === 'completed') completed += 1;
    else
      stuck.push({
        runId,
        status: state.status,
        lastEvents: log.slice(-6).map(describe),
        ledger: await ledgerOf(cluster, runId),
      });
    const observed = new Map<string, unknown[]>();
    // Attempts that ended in a retryable failure (a timeout, a 5xx): each allows one more request of its key.
    const retried = new Map<string, number>();
    for (const event of log) {
      if (event.type === 'tool_call_failed' && event.data.retryable)
        retried.set(event.data.callId, (retried.get(event.data.callId) ?? 0) + 1);
      // Control calls (a child run, a wait) have no effect to count.
      if (event.type === 'tool_call_requested' && !isControlTool(event.data.tool))
        keys.set(event.data.idempotencyKey, { runId, tool: event.data.tool, callId: event.data.callId });
      if (event.type === 'tool_call_completed')
        observed.set(event.data.callId, [...(observed.get(event.data.callId) ?? []), event.data.result]);
    }
    for (const [key, call] of keys) {
      if (call.runId !== runId) continue;
      const results = observed.get(call.callId) ?? [];
      if (results.length > 1) {
        duplicates += results.length - 1;
        problems.push(`${key}: ${results.length} tool_call_completed events`);
      }
      const row = ledger.get(key);
      if (state.status === 'completed' && (!row || row.status !== 'succeeded'))
        problems.push(`${key}: ledger row ${row ? row.status : 'missing'}`);
      if (row && results[0] !== undefined && !isDeepStrictEqual(row.result, results[0]))
        problems.push(
          `${key}: the log recorded ${JSON.stringify(results[0])}, the ledger ${JSON.stringify(row.result)}`,
        );
      const charges = cluster.witness.effects(key);
      if (state.status === 'completed' && charges !== 1)
        problems.push(`${key}: ${charges} charges at the witness`);
      const late = lateArrivals(cluster.witness.attempts(key));
      lateRequests += late;
      if (late > 0 && !options.lateRequestsAllowed)
        problems.push(`${key}: ${late} request(s) reached the witness after a later attempt's`);
      const requests = cluster.witness.requests(key) - late;
      const allowed = 1 + (retried.get(call.callId) ?? 0);
      if (call.tool === 'pay.checked' && requests > allowed) {
        duplicates += requests - allowed;
        problems.push(
          `${key}: pay.checked reached the witness ${requests} times for ${allowed} attempts (a status look-up should settle a crashed one)`,
        );
      } else if (requests > 1) reexecutions += requests - 1;
    }
  }
  const ours = (key: string) => runIds.some((runId) => key.startsWith(`${runId}:`));
  const strays = cluster.witness.keys().filter((key) => ours(key) && !keys.has(key));
  if (strays.length > 0) {
    duplicates += strays.length;
    problems.push(`the witness charged keys no run requested: ${strays.slice(0, 5).join(', ')}`);
  }
  const mismatches = await compareProjections(cluster, states, options.projectionTimeoutMs ?? 30_000);
  for (const { runId, projected, folded } of mismatches.slice(0, 5))
    problems.push(`projection of ${runId} != fold: ${difference(projected, folded)}`);

  const decisions = [...states.values()].reduce((sum, state) => sum + state.decisions, 0);
  const modelCalls = (await cluster.modelCalls()).filter((call) => states.has(call.runId)).length;
  return {
    runs: runIds.length,
    completed,
    steps: keys.size,
    duplicates,
    reexecutions,
    lateRequests,
    modelCalls,
    repeatedModelCalls: Math.max(0, modelCalls - decisions),
    projectionMismatches: mismatches.length,
    problems,
    stuck,
  };
}

/** The top-level fields that differ, with both values when short. */
function difference(projected: unknown, folded: unknown): string {
  if (projected === undefined) return 'the projector has no such run';
  const a = projected as Record<string, unknown>;
  const b = folded as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
    (field) => !isDeepStrictEqual(a[field], b[field]),
  );
  return fields
    .map((field) => {
      const [left, right] = [JSON.stringify(a[field]), JSON.stringify(b[field])];
      return left && right && left.length + right.length < 120 ? `${field} ${left} vs ${right}` : field;
    })
    .join('; ');
}

/** A failure message naming stuck runs with their last events, and every problem found. */
export function explain(verdict: Verdict, serviceTails?: string): string {
  const lines = [
    `${verdict.completed}/${verdict.runs} runs completed, ${verdict.duplicates} duplicate effects, ` +
      `${verdict.projectionMismatches} projection mismatches`,
    ...verdict.problems.slice(0, 20).map((problem) => `  problem: ${problem}`),
    ...verdict.stuck
      .slice(0, 10)
      .flatMap((run) => [
        `  stuck ${run.runId} (${run.status}):`,
        ...run.lastEvents.map((line) => `    ${line}`),
        ...run.ledger.map((line) => `    ${line}`),
      ]),
  ];
  if (serviceTails && (verdict.stuck.length > 0 || verdict.problems.length > 0)) lines.push(serviceTails);
  return lines.join('\n');
}
