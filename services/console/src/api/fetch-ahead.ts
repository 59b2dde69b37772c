import { authHeaders } from './token';

/** An answer fetched ahead by the page: its status and body's bytes, handed to whoever reads it (a worker). */
export interface FetchedAnswer {
  path: string;
  status: number;
  body: ArrayBuffer;
}

/** Fetches `path` with the tab's token and keeps its body as bytes, unparsed; undefined when it cannot. */
export async function fetchAhead(path: string): Promise<FetchedAnswer | undefined> {
  try {
    const response = await fetch(path, { headers: authHeaders() });
    return { path, status: response.status, body: await response.arrayBuffer() };
  } catch {
    return undefined;
  }
}
