import { RunStateSchema, type RunEvent } from '@dura/contracts';
import type { z } from 'zod';
import { api, ApiError, authHeaders } from './http';
import { readEventPages } from './event-pages';

type RunState = z.infer<typeof RunStateSchema>;

/** What the page asks the run reader (run-reader.worker.ts). */
export type RunReaderRequest =
  | { kind: 'events' | 'state'; id: number; runId: string; auth: Record<string, string> }
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
const pending = new Map<number, (reply: RunReaderReply) => void>();

/** The run reader's worker, started on first use (or early, by `startRunReader`); none where it cannot run. */
function reader(): Worker | undefined {
  if (failed || typeof Worker === 'undefined') return undefined;
  if (!worker) {
    try {
      worker = new Worker(new URL('./run-reader.worker.ts', import.meta.url), { type: 'module' });
    } catch {
      failed = true;
      return undefined;
    }
    worker.onmessage = (message: MessageEvent<RunReaderReply>) =>
      pending.get(message.data.id)?.(message.data);
    // A worker that cannot start (or dies) fails the reads it holds (their queries retry); later reads run on
    // the page's thread.
    worker.onerror = () => {
      failed = true;
      worker = undefined;
      for (const [id, settle] of pending)
        settle({ id, kind: 'error', status: 0, code: 'reader_failed', message: 'the run reader stopped' });
    };
  }
  return worker;
}

/** Starts the run reader before it is needed (the page opens on a run: its events are read first thing). */
export function startRunReader(): void {
  reader();
}

/**
 * Sends `kind` for `runId` to the worker; `onPage` sees each event page, the first with the way to ask for the
 * rest; settles with the done value.
 */
function request(
  target: Worker,
  kind: 'events' | 'state',
  runId: string,
  signal: AbortSignal,
  onPage?: (events: RunEvent[], readRest: () => void) => void,
): Promise<unknown> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  const id = nextId++;
  const readRest = () => target.postMessage({ kind: 'rest', id } satisfies RunReaderRequest);
  return new Promise<unknown>((resolve, reject) => {
    const stop = () => {
      pending.delete(id);
      target.postMessage({ kind: 'cancel', id } satisfies RunReaderRequest);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', stop, { once: true });
    pending.set(id, (reply) => {
      if (reply.kind === 'page') return onPage?.(reply.events, readRest);
      pending.delete(id);
      signal.removeEventListener('abort', stop);
      if (reply.kind === 'done') resolve(reply.value);
      else reject(new ApiError(reply.status, reply.code, reply.message));
    });
    target.postMessage({ kind, id, runId, auth: authHeaders() } satisfies RunReaderRequest);
  });
}

/**
 * Every event of the run, read page by page and validated off the page's thread where it can be, else on it.
 * With `onFirst`, the first page is handed to it as soon as it is in (the page draws its first screen from it),
 * and the rest is read once it calls `readRest` (the first screen is drawn): until then, nothing else of the
 * run is fetched, parsed or validated.
 */
export async function readRunEvents(
  runId: string,
  signal: AbortSignal,
  onFirst?: (events: RunEvent[], readRest: () => void) => void,
): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  const add = (page: RunEvent[], readRest: () => void) => {
    for (const event of page) events.push(event);
    if (events.length !== page.length) return;
    if (onFirst) onFirst(page, readRest);
    else readRest();
  };
  const target = reader();
  if (target) await request(target, 'events', runId, signal, add);
  else {
    let readRest = () => {};
    const rest = new Promise<void>((resolve) => (readRest = resolve));
    await readEventPages(runId, (page) => add(page, readRest), { signal, afterFirst: () => rest });
  }
  return events;
}

/** The run's folded state from the projection, validated off the page's thread where it can be, else on it. */
export async function readRunState(runId: string, signal: AbortSignal): Promise<RunState> {
  const target = reader();
  // Validated by the worker with the same schema: it crossed the thread boundary as a structured clone.
  if (target) return (await request(target, 'state', runId, signal)) as RunState;
  return api(RunStateSchema, `/runs/${encodeURIComponent(runId)}`, { signal });
}
