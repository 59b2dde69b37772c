import * as z from 'zod';
import { RUN_LIST_SORTS, RunIdSchema } from '@dura/contracts';
import { isIsoInstant } from './iso-time';
import { BadQuery } from './query-params';

export type ListSort = (typeof RUN_LIST_SORTS)[number];

/**
 * What a cursor holds: the sort it was issued for and the last row's sort key (the exact timestamp text
 * Postgres gave, so the keyset comparison neither repeats nor skips a row) and run id. Opaque to clients:
 * base64url of this JSON.
 */
const CursorSchema = z.object({
  s: z.enum(RUN_LIST_SORTS),
  k: z.string().refine(isIsoInstant, 'not a timestamp'),
  id: RunIdSchema,
});

export function encodeCursor(sort: ListSort, key: string, runId: string): string {
  return Buffer.from(JSON.stringify({ s: sort, k: key, id: runId })).toString('base64url');
}

/** The position after which the page starts; a 400 naming the fix when the cursor is not one we issued. */
export function decodeCursor(cursor: string, sort: ListSort): { key: string; runId: string } {
  let parsed: z.infer<typeof CursorSchema>;
  try {
    const json: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    parsed = CursorSchema.parse(json);
  } catch {
    throw new BadQuery(
      `cursor "${cursor.slice(0, 40)}" is not a cursor this API issued: pass nextCursor of the previous page unchanged, or leave cursor out to start at the first page`,
      'bad_cursor',
    );
  }
  if (parsed.s !== sort)
    throw new BadQuery(
      `cursor was issued for sort=${parsed.s}, but this request asks for sort=${sort}: keep the sort of the first page while paging, or leave cursor out to start again`,
      'bad_cursor',
    );
  return { key: parsed.k, runId: parsed.id };
}
