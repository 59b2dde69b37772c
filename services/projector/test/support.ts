import { eventually } from '@dura/testing';
export { eventually };
import type { MsgRequest } from '@nats-io/jetstream';
import { asc, eq } from 'drizzle-orm';
import {
  STREAMS,
  newEvent,
  runIdFromSubject,
  type EventData,
  type EventType,
  type JsonObject,
  type JsonValue,
  type NewEvent,
} from '@dura/contracts';
import { evolve, idempotencyKey, initialRunState, type RunState } from '@dura/core';
import type { Db } from '@dura/db';
import { decodeStored, ensureStreams, type EventStore } from '@dura/event-store';
import {
  TEST_STREAM_OPTIONS,
  testConnections,
  testLogger,
  type TestDbConnections,
} from '@dura/service-kit/testing';
import {
  checkpoints,
  migrateProjector,
  projectionErrors,
  readStoredStates,
  runEvents,
  runs,
  type RunColumns,
  type StreamMessage,
} from '../src/index';

export { TEST_STREAM_OPTIONS as STREAM_OPTIONS, testLogger };

/** One replica's connections: its own NATS connection and Postgres pool, plus an event store on them. */
export type Connections = TestDbConnections;

export function connect(natsUrl: string, databaseUrl: string, name = 'test'): Promise<Connections> {
  return testConnections(natsUrl, name, databaseUrl);
}

/** Connects, migrates the projector's tables and creates the streams. */
export async function prepare(natsUrl: string, databaseUrl: string): Promise<Connections> {
  const conn = await connect(natsUrl, databaseUrl, 'test-setup');
  try {
    await migrateProjector(conn.database);
    await ensureStreams(conn.jsm, TEST_STREAM_OPTIONS);
  } catch (err) {
    await conn.close();
    throw err;
  }
  return conn;
}

/** Builds a run's events as the planner and gateway would write them, with deterministic ids and times. */
export class RunScript {
  readonly events: NewEvent[] = [];
  private steps = 0;

  /** `startMs`: the time of the first event; each later event is one second after the one before. */
  constructor(
    readonly runId: string,
    private readonly startMs = Date.UTC(2025, 0, 1),
  ) {}

  add<T extends EventType>(type: T, data: EventData<T>): this {
    const n = this.events.length;
    this.events.push(
      newEvent(type, data, {
        id: `${this.runId}#${n}`,
        runId: this.runId,
        ts: new Date(this.startMs + n * 1000).toISOString(),
        correlationId: this.runId,
        ...(n > 0 ? { causationId: `${this.runId}#${n - 1}` } : {}),
      }),
    );
    return this;
  }

  request(
    steps: { tool: string; args: JsonObject }[] = [],
    labels: { tags?: string[]; metadata?: Record<string, string>; tenant?: string } = {},
  ): this {
    return this.add('run_requested', {
      request: { v: 1, runId: this.runId, agent: { kind: 'scripted', steps }, ...labels },
    });
  }

  start(): this {
    return this.add('run_started', {});
  }

  /** A decision for one call, its intent and its result. */
  call(tool: string, args: JsonObject, result: JsonValue): this {
    const step = this.steps + 1;
    const callId = `call-${step}`;
    const key = idempotencyKey({ runId: this.runId, step, tool, args });
    this.steps = step;
    return this.add('thought', thought({ kind: 'tool_calls', calls: [{ callId, tool, args }] }, step - 1))
      .add('tool_call_requested', { callId, step, tool, args, idempotencyKey: key })
      .add('tool_call_completed', {
        callId,
        idempotencyKey: key,
        result,
        attempt: 1,
        deduped: false,
        durationMs: 3,
      });
  }

  finish(output: JsonValue): this {
    return this.add('thought', thought({ kind: 'complete', output }, this.steps)).add('run_completed', {
      output,
    });
  }

  /** A complete run of `calls` echo steps. */
  static complete(runId: string, calls: number): RunScript {
    const script = new RunScript(runId).request().start();
    for (let i = 1; i <= calls; i += 1) script.call('echo', { i }, { i });
    return script.finish({ calls });
  }
}

function thought(decision: EventData<'thought'>['decision'], step: number): EventData<'thought'> {
  return {
    step,
    model: { id: 'scripted', promptVersion: 'test' },
    decision,
    usage: { inputTokens: 2, outputTokens: 1 },
    finishReason: 'stop',
  };
}

/** Appends the scripts' events one at a time, round-robin, so runs interleave on the stream. */
export async function appendInterleaved(store: EventStore, scripts: RunScript[]): Promise<void> {
  const longest = Math.max(...scripts.map((s) => s.events.length));
  for (let i = 0; i < longest; i += 1) {
    for (const script of scripts) {
      const event = script.events[i];
      if (event) await store.append(script.runId, [event], { expectedSeq: 'any' });
    }
  }
}

/** Every message on the run stream, in order, as the projector's consumer sees them. */
export async function streamMessages(conn: Connections): Promise<StreamMessage[]> {
  const out: StreamMessage[] = [];
  for (let seq = 1; ;) {
    // The server (2.9+) answers next_by_subj on the plain msg-get API; nats.js only types it for direct get.
    const query = { seq, next_by_subj: 'dura.run.*' } as unknown as MsgRequest;
    const msg = await conn.jsm.streams.getMessage(STREAMS.runs, query);
    if (!msg) return out;
    out.push({ seq: msg.seq, subject: msg.subject, data: msg.data });
    seq = msg.seq + 1;
  }
}

/**
 * The fold of each run's log (its subject), written independently of the projector: every decodable event
 * of that run that is a valid transition, in order; everything else skipped.
 */
export function foldLog(messages: readonly StreamMessage[]): Map<string, RunState> {
  const states = new Map<string, RunState>();
  for (const msg of messages) {
    const runId = runIdFromSubject(msg.subject);
    try {
      const event = decodeStored(msg);
      if (runId === undefined || event.meta.runId !== runId) continue;
      states.set(runId, evolve(states.get(runId) ?? initialRunState(), event));
    } catch {
      // Not part of the run's state.
    }
  }
  return states;
}

/** Plain JSON, as the state comes back out of a jsonb column or an HTTP body. */
export const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A run's `runs` row with its state put back together (its lists are stored apart); undefined: no row. */
export async function storedRun(db: Db, runId: string) {
  const [row] = await db.select().from(runs).where(eq(runs.runId, runId));
  return row && { ...row, state: (await readStoredStates(db, [runId])).get(runId)?.state };
}

/** Every `runs` row, its state put back together, in run order. */
async function storedRuns(db: Db) {
  const rows = await db.select().from(runs).orderBy(asc(runs.runId));
  const states = await readStoredStates(
    db,
    rows.map((row) => row.runId),
  );
  return rows.map((row) => ({ ...row, state: states.get(row.runId)?.state }));
}

/** Everything the projection wrote, in a stable order, for comparing two databases or two moments. */
export async function snapshot(db: Db) {
  return {
    runs: await storedRuns(db),
    events: await db.select().from(runEvents).orderBy(asc(runEvents.seq)),
    errors: await db
      .select({
        seq: projectionErrors.seq,
        runId: projectionErrors.runId,
        code: projectionErrors.code,
        message: projectionErrors.message,
      })
      .from(projectionErrors)
      .orderBy(asc(projectionErrors.seq)),
    checkpoints: await db.select().from(checkpoints),
  };
}

export async function lastStreamSeq(conn: Connections): Promise<number> {
  return (await conn.jsm.streams.info(STREAMS.runs)).state.last_seq;
}

/** Resolves once `position()` has reached the end of the run stream. */
export async function caughtUp(conn: Connections, position: () => number): Promise<number> {
  const target = await lastStreamSeq(conn);
  return eventually(
    () => Promise.resolve(position() >= target ? position() : undefined),
    `the projection to reach seq ${target}`,
  );
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A `runs` row's derived columns in `summarize`'s shape (times as ISO), to compare with the fold's summary. */
export function rowColumns(row: typeof runs.$inferSelect): RunColumns {
  return {
    runId: row.runId,
    tenant: row.tenant,
    status: row.status,
    lastSeq: row.lastSeq,
    eventCount: row.eventCount,
    steps: row.steps,
    pendingCalls: row.pendingCalls,
    ...(row.lastError === null ? {} : { lastError: row.lastError as { code: string; message: string } }),
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    tags: row.tags,
    metadata: row.metadata as Record<string, string>,
    tools: row.tools,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

/** Adds a `thought` whose model answered `content` and completed the run with it. */
export function thoughtWith(script: RunScript, content: string): RunScript {
  return script.add('thought', {
    step: 0,
    model: { id: 'fake', promptVersion: '1' },
    content,
    decision: { kind: 'complete', output: content },
    usage: { inputTokens: 1, outputTokens: 1 },
    finishReason: 'stop',
  });
}
