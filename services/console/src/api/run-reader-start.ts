// Starting the run reader (run-reader.worker.ts) and fetching a run's first answers ahead, with no schema and
// no React: main.tsx runs it before the app's bundle is loaded, so the reader and the fetches start with the page.
import type { RunEvent } from '@dura/contracts';
import { fetchAhead, type FetchedAnswer } from './fetch-ahead';
import { firstPagePath, statePath } from './run-paths';

/** What the page asks the run reader (run-reader.worker.ts). */
export type RunReaderRequest =
  | {
      kind: 'events' | 'state';
      id: number;
      runId: string;
      auth: Record<string, string>;
      /** The first answer of the read, fetched ahead by the page: the worker parses it, not fetches it. */
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
/** The reads the worker holds, by id: what settles each as its replies come. */
export const pending = new Map<number, (reply: RunReaderReply) => void>();

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

/** First answers fetched ahead, by path, each taken once. */
const ahead = new Map<string, Promise<FetchedAnswer | undefined>>();

/**
 * Starts the run reader before it is needed, and fetches the run's state and first event page while the page
 * and the reader start (the page opens on the run: they are what it shows first). Their bodies are kept as
 * bytes for the reader to parse.
 */
export function startRunReader(runId: string): void {
  if (!reader()) return;
  for (const path of [statePath(runId), firstPagePath(runId)]) ahead.set(path, fetchAhead(path));
}

/** The answer fetched ahead for `path`, if any and if it is a 2xx (anything else is asked for again). */
export async function takeAhead(path: string): Promise<FetchedAnswer | undefined> {
  const fetched = ahead.get(path);
  if (!fetched) return undefined;
  ahead.delete(path);
  const answer = await fetched;
  return answer && answer.status >= 200 && answer.status <= 299 ? answer : undefined;
}
