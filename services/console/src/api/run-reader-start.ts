// The run reader's worker (run-reader.worker.ts) and the reads it holds, with no schema and no React: main.ts
// starts the reader with the page, and with it the reads of a run's state and first events (fetched on this
// thread, parsed and validated there), while the app's bundle loads and starts.
import type { RunEvent } from '@dura/contracts';
import { fetchBytes, succeeded, type FetchedAnswer } from './fetch-ahead';
import { firstPagePath, summaryPath, type RunReadKind } from './run-paths';
import { authHeaders } from './token';

/** What the page asks the run reader. */
export type RunReaderRequest =
  | {
      kind: RunReadKind;
      id: number;
      runId: string;
      auth: Record<string, string>;
      /** The first answer of the read, fetched by the page: the worker parses it, not fetches it. */
      fetched?: FetchedAnswer;
    }
  | { kind: 'cancel'; id: number }
  /** The page has drawn the first event page of read `id`: the reader goes on with the others. */
  | { kind: 'rest'; id: number };

/** What the run reader answers: each event page as it is validated, then the end (with the state) or the error. */
export type RunReaderReply =
  | { id: number; kind: 'page'; events: RunEvent[] }
  | { id: number; kind: 'done'; value?: unknown }
  | { id: number; kind: 'error'; status: number; code: string; message: string };

let worker: Worker | undefined;
let failed = false;
let nextId = 1;
/** The reads the worker holds, by id: who hears each one's replies. */
const listeners = new Map<number, (reply: RunReaderReply) => void>();
/** Replies to reads no one listens to yet (started early), kept until someone does. */
const unheard = new Map<number, RunReaderReply[]>();

const deliver = (reply: RunReaderReply) => {
  const listener = listeners.get(reply.id);
  if (listener) listener(reply);
  else unheard.get(reply.id)?.push(reply);
};

/** The run reader's worker, started on first use (or early, by `startRunReader`); none where it cannot run. */
export function reader(): Worker | undefined {
  if (failed || typeof Worker === 'undefined') return undefined;
  if (!worker) {
    try {
      worker = new Worker(new URL('./run-reader.worker.ts', import.meta.url), { type: 'module' });
    } catch {
      failed = true;
      return undefined;
    }
    worker.onmessage = (message: MessageEvent<RunReaderReply>) => deliver(message.data);
    // A worker that cannot start (or dies) fails the reads it holds (their queries retry); later reads run on
    // the page's thread.
    worker.onerror = () => {
      failed = true;
      worker = undefined;
      for (const id of [...listeners.keys(), ...unheard.keys()])
        deliver({ id, kind: 'error', status: 0, code: 'reader_failed', message: 'the run reader stopped' });
    };
  }
  return worker;
}

/** Asks the worker for the run's events or state (`fetched`: its first answer, moved to the worker); its id. */
export function send(target: Worker, kind: RunReadKind, runId: string, fetched?: FetchedAnswer): number {
  const id = nextId++;
  unheard.set(id, []);
  const message: RunReaderRequest = { kind, id, runId, auth: authHeaders(), ...(fetched ? { fetched } : {}) };
  target.postMessage(message, fetched ? [fetched.body] : []);
  return id;
}

/** Hears read `id`'s replies: those that came before, then the others as they come. */
export function listen(id: number, listener: (reply: RunReaderReply) => void): void {
  listeners.set(id, listener);
  const replies = unheard.get(id) ?? [];
  unheard.delete(id);
  for (const reply of replies) listener(reply);
}

/** Stops hearing read `id` (it is over, or cancelled). */
export function forget(id: number): void {
  listeners.delete(id);
  unheard.delete(id);
}

/** Reads started with the page, by `kind:runId`, each taken once. */
const early = new Map<string, Promise<number | undefined>>();

/**
 * Starts the run reader, and the reads of the run's state without its calls and first event page: each fetched
 * here at once, then parsed and validated by the reader while the app loads (the full state is read once the
 * first screen is drawn). A fetch that fails or answers other than 2xx starts nothing (the app's own read asks
 * again).
 */
export function startRunReader(runId: string): void {
  const target = reader();
  if (!target) return;
  for (const [kind, path] of [
    ['summary', summaryPath(runId)],
    ['events', firstPagePath(runId)],
  ] as const)
    early.set(
      `${kind}:${runId}`,
      fetchBytes(path).then((fetched) => {
        const answer = succeeded(fetched);
        return answer && send(target, kind, runId, answer);
      }),
    );
}

/** The id of the read of `kind` for `runId` started with the page, once; undefined when there is none. */
export async function takeEarly(kind: RunReadKind, runId: string): Promise<number | undefined> {
  const key = `${kind}:${runId}`;
  const read = early.get(key);
  early.delete(key);
  return read;
}
