import * as z from 'zod';

/**
 * Live model text: the `DURA_TOKENS` stream (bounded retention) and the Server-Sent Events of
 * `GET /runs/:id/tokens`. Never needed to rebuild a run: the recorded answer is in the run's `thought`.
 */

/** A model call of a run: `decision` is the thought its answer is recorded in (the count of thoughts before it). */
const CallFields = {
  runId: z.string().min(1),
  decision: z.number().int().nonnegative(),
  /** Which model call of that decision: 0 for an agent's one call, k for a code agent's k-th `ctx.model` of the step. */
  call: z.number().int().nonnegative(),
};

/** One asking of the model for a call: a new one after a crash, a lost race or a provider retry. */
const AttemptSchema = z.string().min(1).max(64);

/** One message of `DURA_TOKENS`: a piece of one attempt's answer, numbered from 0 within the attempt. */
export const TokenMessageSchema = z.object({
  ...CallFields,
  attempt: AttemptSchema,
  /** Per-attempt number from 0: a reader that sees a jump knows text was lost in between. */
  n: z.number().int().nonnegative(),
  delta: z.string().max(64 * 1024),
});
export type TokenMessage = z.infer<typeof TokenMessageSchema>;

/** `discard`: drop the text shown for this attempt; it was asked again, or its answer was never recorded. */
export const TokenDiscardSchema = z.object({
  ...CallFields,
  attempt: AttemptSchema,
  reason: z.enum(['asked_again', 'not_recorded']),
});
/** `gap`: messages `from` (inclusive) to `to` (exclusive) of the attempt are not in the stream (lost or expired). */
export const TokenGapSchema = z.object({
  ...CallFields,
  attempt: AttemptSchema,
  from: z.number().int().nonnegative(),
  to: z.number().int().positive(),
});
/** `final`: the call's answer as the run's log records it; the text to show from now on, whatever came before. */
export const TokenFinalSchema = z.object({ ...CallFields, text: z.string() });
/** `end`: the run ended; nothing more will come. */
export const TokenEndSchema = z.object({ status: z.string() });

/** An event of a run's token feed, as `GET /runs/:id/tokens` sends it (`event:` name and `data:` JSON). */
export type TokenFeedEvent =
  | { event: 'token'; data: TokenMessage }
  | { event: 'discard'; data: z.infer<typeof TokenDiscardSchema> }
  | { event: 'gap'; data: z.infer<typeof TokenGapSchema> }
  | { event: 'final'; data: z.infer<typeof TokenFinalSchema> }
  | { event: 'end'; data: z.infer<typeof TokenEndSchema> };

const FEED_SCHEMAS = {
  token: TokenMessageSchema,
  discard: TokenDiscardSchema,
  gap: TokenGapSchema,
  final: TokenFinalSchema,
  end: TokenEndSchema,
} as const;

/** The feed event an SSE message carries, or undefined for one that is not (a comment, an unknown name, bad data). */
export function parseTokenFeedEvent(
  event: string | undefined,
  data: string | undefined,
): TokenFeedEvent | undefined {
  if (event === undefined || !(event in FEED_SCHEMAS) || data === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  const parsed = FEED_SCHEMAS[event as keyof typeof FEED_SCHEMAS].safeParse(value);
  return parsed.success ? ({ event, data: parsed.data } as TokenFeedEvent) : undefined;
}

/**
 * Where a reader of a run's token feed is: the last `DURA_TOKENS` sequence and the last run-log sequence it has
 * taken in. Sent as the SSE id (`<tokens>-<log>`), so `Last-Event-ID` resumes with no gap and no repeat.
 */
export interface TokenCursor {
  tokens: number;
  log: number;
}

export const TOKEN_CURSOR_START: TokenCursor = { tokens: 0, log: 0 };

export function formatTokenCursor(cursor: TokenCursor): string {
  return `${cursor.tokens}-${cursor.log}`;
}

/** The cursor a `Last-Event-ID` names, or undefined when it is not one (`<tokens>-<log>`, whole numbers). */
export function parseTokenCursor(id: string): TokenCursor | undefined {
  const match = /^(\d{1,15})-(\d{1,15})$/.exec(id.trim());
  if (!match) return undefined;
  return { tokens: Number(match[1]), log: Number(match[2]) };
}

/** Where a decision's model calls send their text while the model answers: for display only, never recorded. */
export interface LiveText {
  /** A piece of the answer of the decision's model call `call` (0 for an agent's one call; k for a code agent's k-th `ctx.model` of the step). */
  delta(call: number, text: string): void;
  /** The text sent so far for `call` is void: the provider is asked again and its answer starts over. */
  restart(call: number): void;
}
