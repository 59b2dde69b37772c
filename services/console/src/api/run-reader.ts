import { RunStateSchema, type RunEvent } from '@dura/contracts';
import type { z } from 'zod';
import { api, ApiError } from './http';
import { authHeaders } from './token';
import type { FetchedAnswer } from './fetch-ahead';
import { readEventPages } from './event-pages';
import { firstPagePath, statePath } from './run-paths';
import { pending, reader, takeAhead, type RunReaderRequest } from './run-reader-start';

type RunState = z.infer<typeof RunStateSchema>;

let nextId = 1;

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
  fetched?: FetchedAnswer,
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
    const message: RunReaderRequest = { kind, id, runId, auth: authHeaders(), ...(fetched ? { fetched } : {}) };
    // The fetched body moves to the worker (no copy).
    target.postMessage(message, fetched ? [fetched.body] : []);
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
  if (target) {
    const fetched = await takeAhead(firstPagePath(runId));
    await request(target, 'events', runId, signal, add, fetched);
  } else {
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
  if (target) {
    const fetched = await takeAhead(statePath(runId));
    return (await request(target, 'state', runId, signal, undefined, fetched)) as RunState;
  }
  return api(RunStateSchema, statePath(runId), { signal });
}
