import { EventPageResponseSchema, type EventPageResponse, type RunEvent } from '@dura/contracts';
import { apiAnswer, validated, type ApiAnswer } from './http';

/** Where an event page says the next one starts, read before the page is validated (it is, right after). */
const nextFromSeqOf = (answer: ApiAnswer): number | undefined => {
  const next = (answer.body as { nextFromSeq?: unknown } | null)?.nextFromSeq;
  return typeof next === 'number' ? next : undefined;
};

/**
 * The first page is short: it holds the first screen of rows, which the page shows while the rest is read.
 * The later pages are as long as the API gives.
 */
const FIRST_PAGE = 100;
const PAGE = 1000;

/**
 * Reads every event of the run page by page, each page validated, and hands each page to `onPage` as it
 * comes. Pages are read one ahead: the next page is on its way while this one is validated.
 */
export async function readEventPages(
  runId: string,
  onPage: (events: RunEvent[]) => void,
  init: { signal?: AbortSignal; auth?: Record<string, string> } = {},
): Promise<void> {
  const path = (from: number, limit = PAGE) =>
    `/runs/${encodeURIComponent(runId)}/events?fromSeq=${from}&limit=${limit}`;
  let from: number | undefined = 0;
  let next: Promise<ApiAnswer> | undefined = apiAnswer(path(from, FIRST_PAGE), init);
  let limit = FIRST_PAGE;
  while (from !== undefined && next) {
    const answer = await next;
    const after = nextFromSeqOf(answer);
    next = after === undefined ? undefined : apiAnswer(path(after), init);
    // Read ahead: if this page turns out invalid, the next one's outcome is nobody's to handle.
    void next?.catch(() => undefined);
    const page: EventPageResponse = validated(EventPageResponseSchema, path(from, limit), answer);
    limit = PAGE;
    onPage(page.events);
    from = page.nextFromSeq;
  }
}
