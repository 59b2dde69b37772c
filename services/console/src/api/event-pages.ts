import { EventPageResponseSchema, type EventPageResponse, type RunEvent } from '@dura/contracts';
import { apiAnswer, fetchedAnswer, validated, type ApiAnswer } from './http';
import type { FetchedAnswer } from './fetch-ahead';
import { eventsPath, firstPagePath } from './run-paths';

/** Where an event page says the next one starts, read before the page is validated (it is, right after). */
const nextFromSeqOf = (answer: ApiAnswer): number | undefined => {
  const next = (answer.body as { nextFromSeq?: unknown } | null)?.nextFromSeq;
  return typeof next === 'number' ? next : undefined;
};

/** The later pages (after the short first one, `firstPagePath`) are as long as the API gives. */
const PAGE = 1000;

/**
 * Reads every event of the run page by page, each page validated, and hands each page to `onPage` as it
 * comes. The first page is `init.first` when the page fetched it ahead. The pages after it are read once
 * `init.afterFirst` settles (the reader has drawn the first), and one ahead: the next page is on its way
 * while this one is validated.
 */
export async function readEventPages(
  runId: string,
  onPage: (events: RunEvent[]) => void,
  init: {
    signal?: AbortSignal;
    auth?: Record<string, string>;
    first?: FetchedAnswer;
    afterFirst?: () => Promise<void>;
  } = {},
): Promise<void> {
  const path = (from: number) => eventsPath(runId, from, PAGE);
  const read = (from: number | undefined) => {
    const answer = from === undefined ? undefined : apiAnswer(path(from), init);
    // Read ahead: if this page turns out invalid, the next one's outcome is nobody's to handle.
    void answer?.catch(() => undefined);
    return answer;
  };
  const firstPath = firstPagePath(runId);
  const answer = init.first ? fetchedAnswer(init.first) : await apiAnswer(firstPath, init);
  const page: EventPageResponse = validated(EventPageResponseSchema, firstPath, answer);
  onPage(page.events);
  if (page.nextFromSeq === undefined) return;
  await init.afterFirst?.();
  let from: number | undefined = page.nextFromSeq;
  let next = read(from);
  while (from !== undefined && next) {
    const answer = await next;
    next = read(nextFromSeqOf(answer));
    const page: EventPageResponse = validated(EventPageResponseSchema, path(from), answer);
    onPage(page.events);
    from = page.nextFromSeq;
  }
}
