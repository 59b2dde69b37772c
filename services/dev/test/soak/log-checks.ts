// The checks a nemesis adds to verifyRuns, read from the outside only (the stream, the ledger's outbox, the
// fake model's request log), never from the code under test: each run's log holds every decision once and in
// order, nothing acknowledged is missing from it, a timer fires once and not before its time (by the broker's
// clock, which no nemesis moves), and a model answer that was recorded is never asked for again.
import { CONTROL_TOOLS, STREAMS, type RunEvent } from '@dura/contracts';
import { createEventStore } from '@dura/event-store';
import type { Cluster } from './cluster';

export interface LogFindings {
  /** Events, decisions, intents or terminal events found twice, or out of order. */
  problems: string[];
  timersFired: number;
  /** Outbox rows marked sent that were checked against the log. */
  sentChecked: number;
}

/** A model request as the fake provider saw it: which run and prompt, and when it arrived. */
export interface ModelAsk {
  runId: string;
  prompt: string;
  at: number;
  /** The replica that asked (its label, sent as the provider API key), where known. */
  caller?: string;
}

/**
 * How long after a model answer was recorded another replica that asked the same question side by side may
 * still send a retry: its watch looks every 250 ms, and one attempt (1.5 s in the soak) may be under way.
 */
const IN_FLIGHT_MS = 2_000;

/** Milliseconds of slack for "not early": a stored time is rounded, and the broker stamps on arrival. */
const TIMER_SLACK_MS = 50;
const TERMINAL = new Set(['run_completed', 'run_failed', 'run_cancelled', 'run_rejected']);

/** The broker's own timestamp of the message at `seq` (milliseconds). */
async function storedAt(cluster: Cluster, seq: number): Promise<number> {
  const msg = await cluster.jsm.streams.getMessage(STREAMS.runs, { seq });
  if (!msg) throw new Error(`the run stream has no message at ${seq}`);
  return msg.timestamp ? Date.parse(msg.timestamp) : msg.time.getTime();
}

function seen<T>(items: readonly T[], keyOf: (item: T) => string | undefined): string[] {
  const counts = new Map<string, number>();
  for (const item of items) {
    const key = keyOf(item);
    if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > 1).map(([key, n]) => `${key} ×${n}`);
}

/** One run's log: no event twice, each step decided once, each intent once, observations after their intent. */
function orderProblems(runId: string, log: readonly RunEvent[]): string[] {
  const problems: string[] = [];
  const twice = (what: string, found: string[]) => {
    if (found.length > 0) problems.push(`${runId}: ${what} twice: ${found.slice(0, 3).join(', ')}`);
  };
  twice(
    'event id',
    seen(log, (e) => e.meta.id),
  );
  twice(
    'decision for step',
    seen(log, (e) => (e.type === 'thought' ? String(e.data.step) : undefined)),
  );
  twice(
    'intent',
    seen(log, (e) => (e.type === 'tool_call_requested' ? e.data.callId : undefined)),
  );
  twice(
    'timer_fired',
    seen(log, (e) => (e.type === 'timer_fired' ? e.data.waitId : undefined)),
  );
  const requested = new Set<string>();
  const completed = new Set<string>();
  for (const [i, event] of log.entries()) {
    if (event.type === 'tool_call_requested') requested.add(event.data.callId);
    if (event.type === 'tool_call_completed' || event.type === 'tool_call_failed') {
      const { callId } = event.data;
      if (!requested.has(callId))
        problems.push(`${runId}: #${event.seq} ${event.type} of ${callId} before its intent`);
      // A late attempt's outcome, recorded by a replica that no longer held the call.
      if (completed.has(callId))
        problems.push(`${runId}: #${event.seq} ${event.type} of ${callId} after it completed`);
      if (event.type === 'tool_call_completed') completed.add(callId);
    }
    if (TERMINAL.has(event.type) && i !== log.length - 1)
      problems.push(`${runId}: #${event.seq} ${event.type} is followed by ${log.length - 1 - i} events`);
  }
  return problems;
}

/** Timers of `dura.sleep` calls: fired at most once, and not before the intent's time plus the sleep. */
async function timerProblems(
  cluster: Cluster,
  runId: string,
  log: readonly RunEvent[],
): Promise<{ problems: string[]; fired: number }> {
  const problems: string[] = [];
  let fired = 0;
  const intents = new Map<string, RunEvent & { type: 'tool_call_requested' }>();
  const waits = new Map<string, string>();
  for (const event of log) {
    if (event.type === 'tool_call_requested' && event.data.tool === CONTROL_TOOLS.sleep)
      intents.set(event.data.callId, event);
    if (event.type === 'wait_requested' && event.data.kind === 'timer' && event.data.callId)
      waits.set(event.data.waitId, event.data.callId);
    if (event.type !== 'timer_fired') continue;
    fired += 1;
    const intent = intents.get(waits.get(event.data.waitId) ?? '');
    const seconds = (intent?.data.args as { seconds?: unknown } | undefined)?.seconds;
    if (!intent || typeof seconds !== 'number') continue;
    const [askedAt, firedAt] = await Promise.all([
      storedAt(cluster, intent.seq),
      storedAt(cluster, event.seq),
    ]);
    const early = askedAt + seconds * 1000 - TIMER_SLACK_MS - firedAt;
    if (early > 0)
      problems.push(
        `${runId}: timer ${event.data.waitId} (${seconds} s) fired ${early} ms early by the broker's clock`,
      );
  }
  return { problems, fired };
}

/** Every outbox row the relay marked sent is in its run's log: an acknowledged observation was not lost. */
async function lostObservations(
  cluster: Cluster,
  runIds: readonly string[],
  logs: Map<string, readonly RunEvent[]>,
): Promise<{ problems: string[]; checked: number }> {
  const rows = await cluster.sql<{ run_id: string; msg_id: string }[]>`
    select run_id, msg_id from outbox where sent_at is not null and run_id in ${cluster.sql(runIds as string[])}`;
  const problems: string[] = [];
  for (const row of rows) {
    const ids = new Set((logs.get(row.run_id) ?? []).map((e) => e.meta.id));
    if (!ids.has(row.msg_id))
      problems.push(`${row.run_id}: observation ${row.msg_id} marked sent is not in the log`);
  }
  return { problems, checked: rows.length };
}

/** Checks every run's log, timers and relayed observations. */
export async function checkLogs(cluster: Cluster, runIds: readonly string[]): Promise<LogFindings> {
  const store = createEventStore(cluster);
  const logs = new Map<string, readonly RunEvent[]>();
  const problems: string[] = [];
  let timersFired = 0;
  for (const runId of runIds) {
    const log = await store.read(runId);
    logs.set(runId, log);
    if (log[0]?.type !== 'run_requested')
      problems.push(`${runId}: the log does not start with run_requested`);
    problems.push(...orderProblems(runId, log));
    const timers = await timerProblems(cluster, runId, log);
    problems.push(...timers.problems);
    timersFired += timers.fired;
  }
  const lost = await lostObservations(cluster, runIds, logs);
  problems.push(...lost.problems);
  return { problems, timersFired, sentChecked: lost.checked };
}

/**
 * A model answer recorded in a `thought` is never asked for again: no request for the same run and prompt
 * arrives after the broker stored that thought. Asks before it (attempts that failed, timed out, or whose
 * answer came after the caller gave up) are the retries the provider contract allows.
 */
export async function modelAskProblems(
  cluster: Cluster,
  asks: readonly ModelAsk[],
  promptsOf: (thought: RunEvent & { type: 'thought' }) => string[],
  runIds: readonly string[],
  options: {
    /**
     * A time the broker held what it received unwritten (its disk stalled): a thought it stamped then could be
     * read only once the disk answered again, so it counts as recorded from `until`.
     */
    unreadable?: { from: number; until: number };
  } = {},
): Promise<{ problems: string[]; asked: number; recorded: number; racing: number }> {
  const store = createEventStore(cluster);
  const problems: string[] = [];
  let recorded = 0;
  let racing = 0;
  for (const runId of runIds) {
    for (const event of await store.read(runId)) {
      if (event.type !== 'thought') continue;
      const prompts = promptsOf(event);
      if (prompts.length === 0) continue;
      const stamped = await storedAt(cluster, event.seq);
      const held = options.unreadable;
      const at = held && stamped >= held.from && stamped < held.until ? held.until : stamped;
      for (const prompt of prompts) {
        recorded += 1;
        const later = asks.filter((ask) => ask.runId === runId && ask.prompt === prompt && ask.at > at);
        // A replica that raced the recorder stops its retries within a look of its watch plus an attempt.
        const inFlight = later.filter((ask) => ask.at <= at + IN_FLIGHT_MS).length;
        racing += inFlight;
        if (later.length > inFlight) {
          // Every ask of the prompt, in ms from the thought's store time: what a reader needs to tell who raced.
          const times = asks
            .filter((ask) => ask.runId === runId && ask.prompt === prompt)
            .map(
              (ask) => `${ask.at - at >= 0 ? '+' : ''}${ask.at - at}${ask.caller ? ` by ${ask.caller}` : ''}`,
            );
          problems.push(
            `${runId}: "${prompt}" asked ${later.length - inFlight} more times over ${IN_FLIGHT_MS} ms after its answer was recorded (seq ${event.seq}; asks at ${times.join(', ')} ms)`,
          );
        }
      }
    }
  }
  return { problems, asked: asks.filter((ask) => runIds.includes(ask.runId)).length, recorded, racing };
}
