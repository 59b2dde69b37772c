import { StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm, KvWatchInclude, type KV, type KvEntry, type KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/nats-core';
import * as z from 'zod';
import { BUCKETS, DuraError, type ToolTask } from '@dura/contracts';
import { LruCache } from '@dura/core';
import type { Logger } from '@dura/service-kit';
import type { ToolContext, ToolDefinition } from '@dura/tools';
import { runTool, type ToolOutcome } from './run-tool';

/** What the planner writes under key `<runId>` when it records the run's cancellation. */
export const CancellationSchema = z.object({ reason: z.string(), ts: z.string() });
export type Cancellation = z.infer<typeof CancellationSchema>;

/** The abort reason of a call whose run was cancelled while it ran. */
export class RunCancelled extends DuraError {
  readonly runId: string;
  readonly reason: string;

  constructor(runId: string, reason: string) {
    super('cancelled', `run ${runId} was cancelled: ${reason}`, { retryable: false });
    this.runId = runId;
    this.reason = reason;
  }
}

/** A call of a run, registered while it may run: its signal aborts when the run is cancelled. */
export interface TrackedCall {
  readonly signal: AbortSignal;
  release(): void;
}

const REWATCH_PAUSE_MS = 1_000;
/** Cancellations the watcher delivered that a call run in place checks without a read (newest kept). */
const RECENT_MAX = 10_000;

/** Creates the `dura_cancellations` bucket (history 1, file storage), or binds to it when it exists. */
export function openCancellationBucket(
  js: JetStreamClient,
  options: { replicas?: number } = {},
): Promise<KV> {
  return new Kvm(js).create(BUCKETS.cancellations, {
    history: 1,
    storage: StorageType.File,
    replicas: options.replicas ?? 1,
    description: "Dura run cancellations: runId -> {reason, ts}; gateways abort the run's in-flight calls",
  });
}

/**
 * Run cancellations as the gateway sees them: `check` reads the bucket, and one watcher per process aborts
 * every registered call of a run when its key is written. A call registers before it checks, so a
 * cancellation is either seen by the check or delivered to the watcher while the call runs.
 */
export function createCancellations(options: { js: JetStreamClient; log: Logger; replicas?: number }) {
  const { log } = options;
  const inFlight = new Map<string, Set<AbortController>>();
  let kv: KV | undefined;
  let watcher: QueuedIterator<KvWatchEntry> | undefined;
  let loop: Promise<void> | undefined;
  let running = false;
  const recent = new LruCache<string, Cancellation>(RECENT_MAX);

  function remember(runId: string, cancellation: Cancellation): void {
    recent.set(runId, cancellation);
  }

  function abortRun(runId: string, cancellation: Cancellation): void {
    const calls = inFlight.get(runId);
    if (!calls) return;
    log.info('run cancelled: aborting its in-flight calls', { runId, calls: calls.size });
    for (const controller of calls) controller.abort(new RunCancelled(runId, cancellation.reason));
  }

  function decode(runId: string, entry: KvEntry): Cancellation {
    let parsed: z.ZodSafeParseResult<Cancellation> | undefined;
    try {
      parsed = CancellationSchema.safeParse(entry.json());
    } catch {
      parsed = undefined;
    }
    if (parsed?.success) return parsed.data;
    log.warn('cancellation entry is not {reason, ts}; treating the run as cancelled anyway', { runId });
    return { reason: 'no reason recorded', ts: entry.created.toISOString() };
  }

  async function watch(bucket: KV): Promise<QueuedIterator<KvWatchEntry>> {
    const iterator = await bucket.watch({ include: KvWatchInclude.UpdatesOnly });
    // A cancellation written while no watcher ran (before a re-watch) reaches the calls through a read.
    await Promise.all(
      [...inFlight.keys()].map(async (runId) => {
        const cancellation = await check(runId);
        if (cancellation) abortRun(runId, cancellation);
      }),
    );
    return iterator;
  }

  async function consume(first: QueuedIterator<KvWatchEntry>, bucket: KV): Promise<void> {
    let iterator: QueuedIterator<KvWatchEntry> | undefined = first;
    while (running) {
      try {
        iterator ??= await watch(bucket);
        watcher = iterator;
        if (!running) break;
        for await (const entry of iterator) {
          if (entry.operation !== 'PUT') continue;
          const cancellation = decode(entry.key, entry);
          remember(entry.key, cancellation);
          abortRun(entry.key, cancellation);
        }
        if (running) log.warn('cancellation watcher ended; watching again');
      } catch (err) {
        if (running) log.warn('cancellation watcher failed; watching again', { err });
      }
      iterator = undefined;
      if (running) await new Promise((resolve) => setTimeout(resolve, REWATCH_PAUSE_MS));
    }
  }

  /** The run's cancellation, or undefined when it is not cancelled (or the bucket cannot be read now). */
  async function check(runId: string): Promise<Cancellation | undefined> {
    if (!kv) throw new Error('cancellations: start() first');
    try {
      const entry = await kv.get(runId);
      return entry && entry.operation === 'PUT' ? decode(runId, entry) : undefined;
    } catch (err) {
      // The watcher still aborts the call if the cancellation arrives while it runs.
      log.warn('cannot read the cancellations bucket; running the call', { runId, err });
      return undefined;
    }
  }

  return {
    check,
    /**
     * The run's cancellation if this process's watcher has delivered it, without a read. A call registered
     * before asking is aborted by the watcher if the cancellation arrives later.
     */
    delivered(runId: string): Cancellation | undefined {
      return recent.get(runId);
    },
    /** Registers a call of `runId`; `release` it when the call has ended. */
    register(runId: string): TrackedCall {
      const controller = new AbortController();
      const calls = inFlight.get(runId) ?? new Set<AbortController>();
      calls.add(controller);
      inFlight.set(runId, calls);
      return {
        signal: controller.signal,
        release() {
          calls.delete(controller);
          if (calls.size === 0 && inFlight.get(runId) === calls) inFlight.delete(runId);
        },
      };
    },
    async start(): Promise<void> {
      const bucket = await openCancellationBucket(options.js, { replicas: options.replicas ?? 1 });
      kv = bucket;
      running = true;
      const first = await watch(bucket);
      loop = consume(first, bucket);
    },
    async stop(): Promise<void> {
      running = false;
      watcher?.stop();
      await loop;
      watcher?.stop();
    },
  };
}

export type Cancellations = ReturnType<typeof createCancellations>;

/**
 * One attempt of a call, unless its run is cancelled. The call registers BEFORE it reads the bucket: a
 * cancellation is then either seen by the read (the effect never starts) or aborts the running call.
 * `read: false` skips the read for a call whose caller has just read the run's log itself (a call run in
 * place, right after its intent's guarded append found no cancellation ahead of it): a cancellation marked
 * since then is either one the watcher already delivered (the call does not start) or reaches the call
 * through the watcher.
 */
export async function runUnlessCancelled(
  cancellations: Cancellations,
  tool: ToolDefinition,
  task: ToolTask,
  attempt: number,
  storeBytes?: ToolContext['storeBytes'],
  options: {
    read?: boolean;
    /**
     * Called right before the tool starts, after the cancellation read (which waits on NATS): whatever it
     * throws propagates and the tool does not start. Where an attempt re-checks its claim's lease.
     */
    beforeStart?: () => void;
  } = {},
): Promise<ToolOutcome> {
  const call = cancellations.register(task.runId);
  try {
    const cancellation =
      options.read === false ? cancellations.delivered(task.runId) : await cancellations.check(task.runId);
    const reason =
      cancellation?.reason ?? (call.signal.aborted ? (call.signal.reason as RunCancelled).reason : undefined);
    if (reason !== undefined) {
      const message = `run ${task.runId} was cancelled (${reason}) before ${tool.name} started; the effect did not run`;
      return {
        ok: false,
        error: { code: 'run_cancelled', message, retryable: false, cancelled: 'before_start' },
        durationMs: 0,
      };
    }
    options.beforeStart?.();
    return await runTool(tool, task, attempt, call.signal, storeBytes);
  } finally {
    call.release();
  }
}
