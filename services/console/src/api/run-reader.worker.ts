// The run page's reader, off the page's thread: fetching, parsing and validating a long run's event pages and
// its folded state (most of the work of opening it) runs here while the page renders; the page gets
// validated values.
import { RunStateSchema, RunStateSummarySchema } from '@dura/contracts';
import { api, ApiError, fetchedAnswer, validated } from './http';
import { readEventPages } from './event-pages';
import type { RunReaderReply, RunReaderRequest } from './run-reader-start';
import { statePath, summaryPath } from './run-paths';

const reads = new Map<number, AbortController>();
/** Event reads waiting for the page to draw their first page: what lets each go on. */
const held = new Map<number, () => void>();
const reply = (message: RunReaderReply) => postMessage(message);

/** Settles once the page says it has drawn the first event page of read `id` (or the read is cancelled). */
const drawn = (id: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const stop = () => reject(signal.reason as Error);
    if (signal.aborted) return stop();
    signal.addEventListener('abort', stop, { once: true });
    held.set(id, () => {
      signal.removeEventListener('abort', stop);
      resolve();
    });
  });

onmessage = (message: MessageEvent<RunReaderRequest>) => {
  const request = message.data;
  if (request.kind === 'rest') {
    held.get(request.id)?.();
    held.delete(request.id);
    return;
  }
  if (request.kind === 'cancel') {
    reads.get(request.id)?.abort();
    reads.delete(request.id);
    held.delete(request.id);
    return;
  }
  const { id, runId, auth, fetched } = request;
  const abort = new AbortController();
  reads.set(id, abort);
  const init = { signal: abort.signal, auth };
  const [schema, path] =
    request.kind === 'summary'
      ? [RunStateSummarySchema, summaryPath(runId)]
      : [RunStateSchema, statePath(runId)];
  const read =
    request.kind === 'events'
      ? readEventPages(runId, (events) => reply({ id, kind: 'page', events }), {
          ...init,
          ...(fetched ? { first: fetched } : {}),
          afterFirst: () => drawn(id, abort.signal),
        }).then(() => undefined)
      : fetched
        ? Promise.resolve().then(() => validated(schema, path, fetchedAnswer(fetched)))
        : api(schema, path, init);
  read
    .then((value) => reply({ id, kind: 'done', value }))
    .catch((err: unknown) =>
      reply({
        id,
        kind: 'error',
        status: err instanceof ApiError ? err.status : 0,
        code: err instanceof ApiError ? err.code : 'read_failed',
        message: err instanceof Error ? err.message : String(err),
      }),
    )
    .finally(() => reads.delete(id));
};
