/** The run's folded state (`GET /runs/:id`). */
export const statePath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

/**
 * The run's state without its calls (`GET /runs/:id?calls=none`): all the page's first screen needs of it, a
 * small part of a long run's state. The full state is read once the first screen is drawn.
 */
export const summaryPath = (runId: string) => `${statePath(runId)}?calls=none`;

/** What the run reader reads: the run's events, its state, or its state without its calls. */
export type RunReadKind = 'events' | 'state' | 'summary';

/** A page of the run's events from `from` (`GET /runs/:id/events`). */
export const eventsPath = (runId: string, from: number, limit: number) =>
  `/runs/${encodeURIComponent(runId)}/events?fromSeq=${from}&limit=${limit}`;

/**
 * The first page is short: it holds the first screen of rows, which the page shows while the rest is read
 * (and which a page opening on the run fetches ahead).
 */
const FIRST_PAGE = 100;

export const firstPagePath = (runId: string) => eventsPath(runId, 0, FIRST_PAGE);
