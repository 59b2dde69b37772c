import * as z from 'zod';
import { formatIssues } from './format-issues';

// A direct call: a planner hands one tool call straight to a gateway (core NATS request/reply on
// `dura.call.<tool>`, one gateway of the queue group) instead of a tool task, and goes on with the run from
// the reply. The request's body is the tool task; the replies are headers (and the observation's bytes).
// Nothing of it is stored: when no gateway answers, the call goes out as a tool task after all.

/** The queue group of the gateways answering direct calls: each request reaches one of them. */
export const DIRECT_CALL_QUEUE = 'dura-gateways';

export const DIRECT_CALL_HEADERS = {
  /** Request: the run's last sequence as the planner knows it; the observation is appended right behind it if it can be. */
  after: 'Dura-Call-After',
  /** Request: `true` when the planner recorded the call's intent itself a moment ago (no attempt can have begun). */
  fresh: 'Dura-Call-Fresh',
  /** Reply: `working` (the call runs; sent every second), `done`, `declined` or `failed`. */
  reply: 'Dura-Call',
  /** Reply `done`: the observation's sequence in the run's log, when the gateway published it. */
  seq: 'Dura-Call-Seq',
  /** Reply `done`: the attempt failed and the call is to be retried after this many ms. */
  retryAfterMs: 'Dura-Call-Retry-After-Ms',
} as const;

/** Reads one header of a message (undefined when absent). */
export type HeaderReader = (name: string) => string | undefined;

export interface DirectCallRequest {
  after?: number;
  fresh: boolean;
}

/**
 * A reply to a direct call. `done` carries the outcome (the body, when set, is the observation as the log
 * stored it right behind `after`); `declined` (not run: no such tool here, a limit across replicas, too busy,
 * stopping) and `failed` (the gateway could not run it) both send the call out as a tool task.
 */
export type DirectCallReply =
  | { kind: 'working' }
  | { kind: 'done'; seq?: number; retryAfterMs?: number; observation?: Uint8Array }
  | { kind: 'declined'; reason: string }
  | { kind: 'failed'; reason: string };

const count = z
  .string()
  .regex(/^\d{1,15}$/, 'expected a whole number')
  .transform(Number);

const RequestHeadersSchema = z.object({
  after: count.optional(),
  fresh: z.enum(['true', 'false']).optional(),
});

const ReplyHeadersSchema = z.object({
  reply: z.enum(['working', 'done', 'declined', 'failed']),
  seq: count.optional(),
  retryAfterMs: count.optional(),
});

function headersOf<K extends keyof typeof DIRECT_CALL_HEADERS>(
  get: HeaderReader,
  keys: readonly K[],
): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const key of keys) {
    const value = get(DIRECT_CALL_HEADERS[key]);
    if (value !== undefined && value !== '') out[key] = value;
  }
  return out;
}

/** The request's options, or what is wrong with its headers. */
export function directCallRequestOf(
  get: HeaderReader,
): { ok: true; request: DirectCallRequest } | { ok: false; problem: string } {
  const parsed = RequestHeadersSchema.safeParse(headersOf(get, ['after', 'fresh']));
  if (!parsed.success)
    return { ok: false, problem: `direct call headers: ${formatIssues(parsed.error).join('; ')}` };
  const { after, fresh } = parsed.data;
  return { ok: true, request: { ...(after === undefined ? {} : { after }), fresh: fresh === 'true' } };
}

/** A reply as its headers and body say, or what is wrong with them. */
export function directCallReplyOf(
  get: HeaderReader,
  body: Uint8Array,
): { ok: true; reply: DirectCallReply } | { ok: false; problem: string } {
  const parsed = ReplyHeadersSchema.safeParse(headersOf(get, ['reply', 'seq', 'retryAfterMs']));
  if (!parsed.success)
    return { ok: false, problem: `direct call reply headers: ${formatIssues(parsed.error).join('; ')}` };
  const { reply, seq, retryAfterMs } = parsed.data;
  switch (reply) {
    case 'working':
      return { ok: true, reply: { kind: 'working' } };
    case 'done':
      if (body.length > 0 && seq === undefined)
        return { ok: false, problem: 'direct call reply: an observation without its sequence' };
      return {
        ok: true,
        reply: {
          kind: 'done',
          ...(seq === undefined ? {} : { seq }),
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
          ...(body.length > 0 ? { observation: body } : {}),
        },
      };
    case 'declined':
    case 'failed':
      return {
        ok: true,
        reply: { kind: reply, reason: new TextDecoder().decode(body) || '(no reason given)' },
      };
  }
}
