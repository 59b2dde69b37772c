/** The run's folded state (`GET /runs/:id`). */
export const statePath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

/** A page of the run's events from `from` (`GET /runs/:id/events`). */
export const eventsPath = (runId: string, from: number, limit: number) =>
  `/runs/${encodeURIComponent(runId)}/events?fromSeq=${from}&limit=${limit}`;

/**
 * The first page is short: it holds the first screen of rows, which the page shows while the rest is read
 * (and which a page opening on the run fetches ahead).
 */
const FIRST_PAGE = 100;

export const firstPagePath = (runId: string) => eventsPath(runId, 0, FIRST_PAGE);
