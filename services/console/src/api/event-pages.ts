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
 * comes. The pages after the first are read once `init.afterFirst` settles (the reader has drawn the first),
 * and one ahead: the next page is on its way while this one is validated.
 */
export async function readEventPages(
  runId: string,
  onPage: (events: RunEvent[]) => void,
  init: { signal?: AbortSignal; auth?: Record<string, string>; afterFirst?: () => Promise<void> } = {},
): Promise<void> {
  const path = (from: number, limit = PAGE) =>
    `/runs/${encodeURIComponent(runId)}/events?fromSeq=${from}&limit=${limit}`;
  const read = (from: number | undefined) => {
    const answer = from === undefined ? undefined : apiAnswer(path(from), init);
    // Read ahead: if this page turns out invalid, the next one's outcome is nobody's to handle.
    void answer?.catch(() => undefined);
    return answer;
  };
  const answer = await apiAnswer(path(0, FIRST_PAGE), init);
  const page: EventPageResponse = validated(EventPageResponseSchema, path(0, FIRST_PAGE), answer);
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
