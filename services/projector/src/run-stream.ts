import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JetStreamManager } from '@nats-io/jetstream';
import { and, asc, eq, inArray } from 'drizzle-orm';
import { EVENT_TYPES, runSubject, STREAMS, type EventType, type RunEvent } from '@dura/contracts';
import { STATUS_AFTER, isTerminal, type RunStatus } from '@dura/core';
import type { Db } from '@dura/db';
import {
  decodeStored,
  EVENT_TYPE_HEADER,
  followRun,
  type RunReader,
  type RunWakeups,
} from '@dura/event-store';
import type { HttpResponse, Logger } from '@dura/service-kit';
import { NotFound, intParam, parseIntIn } from './query-params';
import { runEvents } from './db/schema';

export interface RunStreamDeps {
  db: Db;
  jsm: JetStreamManager;
  /** Message gets by sequence and one shared wake-up subscription per followed run: no consumer per stream. */
  reader: RunReader;
  wakeups: RunWakeups;
  /** Re-read interval without a wake-up (default 5 s). */
  pollMs?: number;
  /** Interval of the `: keepalive` comment (default 15 s). */
  keepaliveMs?: number;
  log?: Logger;
}

/** Event types after which a run's stream ends, with the status they leave. */
const TERMINAL: ReadonlyMap<EventType, RunStatus> = new Map(
  EVENT_TYPES.flatMap((type) => {
    const status = STATUS_AFTER[type];
    return status !== undefined && isTerminal(status) ? [[type, status] as const] : [];
  }),
);

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};
const REREAD_MS = 250;

/** First seq to send: `Last-Event-ID` + 1 when the header is present (it wins), else `fromSeq` (default 1). */
function startSeq(query: URLSearchParams, req: IncomingMessage): number {
  const header = req.headers['last-event-id'];
  if (typeof header === 'string' && header.trim() !== '')
    return parseIntIn(header, 'header Last-Event-ID (the seq of the last event received)', {}) + 1;
  return Math.max(1, intParam(query, 'fromSeq', 1));
}

/**
 * `GET /runs/:id/stream`: the run's events as Server-Sent Events, history then live, read by sequence from
 * the run's log (so the two cannot overlap or leave a gap), then `end` after the terminal event. It holds no
 * consumer on the server: a closed connection leaves nothing behind. Checks run before the response
 * starts, so a bad request still gets a JSON error.
 */
export async function openRunStream(
  deps: RunStreamDeps,
  runId: string,
  query: URLSearchParams,
  req: IncomingMessage,
): Promise<HttpResponse> {
  const from = startSeq(query, req);
  const last = await deps.jsm.streams.getMessage(STREAMS.runs, { last_by_subj: runSubject(runId) });
  if (!last)
    throw new NotFound(
      'run_not_found',
      `no run ${runId}: its log ${runSubject(runId)} holds no event; check the run id, or retry once the run is submitted`,
    );
  const lastType = last.header?.get(EVENT_TYPE_HEADER) as EventType | undefined;
  const endedBefore = async (): Promise<RunStatus | undefined> => {
    if (lastType && last.seq < from && TERMINAL.has(lastType)) return TERMINAL.get(lastType);
    return terminalBefore(deps.db, runId, from);
  };
  return {
    status: 200,
    headers: SSE_HEADERS,
    stream: (res, signal) => pump({ deps, runId, from, endedBefore, res, signal }),
  };
}

/** The status of the run's terminal event when the log (as projected) holds it before `from`. */
async function terminalBefore(db: Db, runId: string, from: number): Promise<RunStatus | undefined> {
  const [row] = await db
    .select({ seq: runEvents.seq, type: runEvents.type })
    .from(runEvents)
    .where(and(eq(runEvents.runId, runId), inArray(runEvents.type, [...TERMINAL.keys()])))
    .orderBy(asc(runEvents.seq))
    .limit(1);
  return row && row.seq < from ? TERMINAL.get(row.type as EventType) : undefined;
}

function frame(event: RunEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

async function pump(o: {
  deps: RunStreamDeps;
  runId: string;
  from: number;
  endedBefore: () => Promise<RunStatus | undefined>;
  res: ServerResponse;
  signal: AbortSignal;
}): Promise<void> {
  const { deps, runId, res } = o;
  let next = o.from;
  let ended = false;
  let failing = false;
  // Ends the read when the client goes away or the stream ends.
  const reading = new AbortController();
  const signal = reading.signal;
  const stop = (): void => reading.abort();
  o.signal.addEventListener('abort', stop, { once: true });
  if (o.signal.aborted) stop();
  const end = (status: RunStatus): void => {
    if (ended) return;
    ended = true;
    res.write(`event: end\ndata: ${JSON.stringify({ status })}\n\n`);
    stop();
  };
  // A client resuming after the terminal event gets `end` at once; the same check on every keepalive covers
  // a terminal event that the projection had not yet seen when the stream opened.
  const checkEnded = async (): Promise<void> => {
    const status = await o.endedBefore();
    if (status) end(status);
  };
  const keepalive = setInterval(() => {
    if (ended || signal.aborted) return;
    res.write(': keepalive\n\n');
    checkEnded().catch((err: unknown) => deps.log?.warn('run stream end check failed', { runId, err }));
  }, deps.keepaliveMs ?? 15_000);
  try {
    await checkEnded();
    while (!ended && !signal.aborted) {
      const messages = followRun(deps, runId, {
        fromSeq: next,
        signal,
        ...(deps.pollMs === undefined ? {} : { pollMs: deps.pollMs }),
      });
      try {
        for await (const msg of messages) {
          failing = false;
          if (ended || signal.aborted) break;
          // Never send a seq twice, whatever a repeated read returns.
          if (msg.seq < next) continue;
          next = msg.seq + 1;
          let event: RunEvent;
          try {
            event = decodeStored(msg);
            if (event.meta.runId !== runId) throw new Error(`it names run ${event.meta.runId}`);
          } catch (err) {
            // Not an event of this run (the projection refuses it too): say so in a comment, send nothing else.
            res.write(`: seq ${msg.seq} skipped, not a valid event of this run: ${oneLine(err)}\n\n`);
            continue;
          }
          if (!res.write(frame(event))) await drained(res, signal);
          const status = TERMINAL.get(event.type);
          if (status) end(status);
        }
      } catch (err) {
        // A failed read (connection trouble): read again from `next` after a pause.
        if (ended || signal.aborted) break;
        if (!failing) deps.log?.warn('run stream read failed; reading again', { runId, next, err });
        failing = true;
      }
      if (!ended && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, REREAD_MS));
    }
  } finally {
    clearInterval(keepalive);
    o.signal.removeEventListener('abort', stop);
    stop();
  }
}

/** Resolves once `res` can take more, or the client went away. */
export function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/[\r\n]+/g, ' ');
}
