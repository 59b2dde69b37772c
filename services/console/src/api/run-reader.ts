import { RunStateSchema, RunStateSummarySchema, type RunEvent } from '@dura/contracts';
import type { z } from 'zod';
import { api, ApiError } from './http';
import { readEventPages } from './event-pages';
import { statePath, summaryPath, type RunReadKind } from './run-paths';
import { forget, listen, reader, send, takeEarly, type RunReaderRequest } from './run-reader-start';

type RunState = z.infer<typeof RunStateSchema>;
type RunStateSummary = z.infer<typeof RunStateSummarySchema>;

/**
 * Runs `kind` for `runId` in the worker (the read started with the page, when there is one); `onPage` sees
 * each event page, the first with the way to ask for the rest; settles with the done value.
 */
async function request(
  target: Worker,
  kind: RunReadKind,
  runId: string,
  signal: AbortSignal,
  onPage?: (events: RunEvent[], readRest: () => void) => void,
): Promise<unknown> {
  const id = (await takeEarly(kind, runId)) ?? send(target, kind, runId);
  const post = (message: RunReaderRequest) => target.postMessage(message);
  const readRest = () => post({ kind: 'rest', id });
  return new Promise<unknown>((resolve, reject) => {
    const stop = () => {
      forget(id);
      post({ kind: 'cancel', id });
      reject(signal.reason as Error);
    };
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    listen(id, (reply) => {
      if (reply.kind === 'page') return onPage?.(reply.events, readRest);
      forget(id);
      signal.removeEventListener('abort', stop);
      if (reply.kind === 'done') resolve(reply.value);
      else reject(new ApiError(reply.status, reply.code, reply.message));
    });
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
  return api(RunStateSchema, statePath(runId), { signal });
}

/** The run's state without its calls (what the first screen needs), validated off the page's thread where it can be. */
export async function readRunSummary(runId: string, signal: AbortSignal): Promise<RunStateSummary> {
  const target = reader();
  if (target) return (await request(target, 'summary', runId, signal)) as RunStateSummary;
  return api(RunStateSummarySchema, summaryPath(runId), { signal });
}
