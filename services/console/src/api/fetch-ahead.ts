// Answers fetched before the app asks for them (main.ts starts them with the page, while the app's bundle loads):
// their bodies kept as bytes, for the one who reads them to parse.
import { authHeaders } from './token';

/** An answer fetched ahead: its path, status and body's bytes (which can move to a worker without a copy). */
export interface FetchedAnswer {
  path: string;
  status: number;
  body: ArrayBuffer;
}

/** Fetches `path` with the tab's token and keeps its body as bytes, unparsed; undefined when it cannot. */
export async function fetchBytes(path: string): Promise<FetchedAnswer | undefined> {
  try {
    const response = await fetch(path, { headers: authHeaders() });
    return { path, status: response.status, body: await response.arrayBuffer() };
  } catch {
    return undefined;
  }
}

/** A 2xx answer, or undefined: anything else (a 401 before signing in, a 404) is asked for again when needed. */
export const succeeded = (answer: FetchedAnswer | undefined) =>
  answer && answer.status >= 200 && answer.status <= 299 ? answer : undefined;

const ahead = new Map<string, Promise<FetchedAnswer | undefined>>();

/** Starts fetching `path` (a GET), for the first `takeAhead(path)`. */
export function fetchAhead(path: string): void {
  ahead.set(path, fetchBytes(path).then(succeeded));
}

/** The 2xx answer fetched ahead for `path`, once; undefined when there is none (fetch it then). */
export function takeAhead(path: string): Promise<FetchedAnswer | undefined> | undefined {
  const fetched = ahead.get(path);
  ahead.delete(path);
  return fetched;
}
