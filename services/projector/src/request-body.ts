import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { decodeMessage, formatIssues, MESSAGE_LIMITS } from '@dura/contracts';
import { BODY_TOO_LARGE } from '@dura/service-kit';
import { z as zod } from 'zod';
import { BadQuery } from './query-params';

/** Parses a decoded body with `schema`, or a 400 `bad_body` naming every issue. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new BadQuery(
      `the body of ${what} is invalid: ${formatIssues(parsed.error).join('; ')}`,
      'bad_body',
    );
  return parsed.data;
}

/**
 * A JSON body of at most one message's size (`MESSAGE_LIMITS`, or `limits`), parsed with `schema`: 413, or 400
 * naming what is wrong with `what` (`an event`); `holds` says what it should hold, for the 413 and an empty body.
 */
export async function readMessageBody<S extends z.ZodType>(
  req: IncomingMessage,
  schema: S,
  what: string,
  holds: string,
  limits: Omit<ReadBodyOptions, 'what'> = { maxBytes: MESSAGE_LIMITS.maxBytes, emptyIsObject: false },
): Promise<z.infer<S>> {
  const body = await readJsonBody(req, { ...limits, what: holds });
  return parseBody(schema, body, what);
}

export interface ReadBodyOptions {
  maxBytes: number;
  /** An empty body reads as `{}`; otherwise it is a 400. */
  emptyIsObject: boolean;
  /** What the body should hold, for the 413 message ("send only …"). */
  what: string;
}

/**
 * The request body as JSON, at most `maxBytes` (413 before a byte is read when the declared length is over),
 * within the limits of every message (depth, sizes, UTF-8, storable text) before any schema recurses into it.
 */
export async function readJsonBody(req: IncomingMessage, options: ReadBodyOptions): Promise<unknown> {
  const tooLarge = () =>
    new BadQuery(
      `the request body exceeds ${options.maxBytes} bytes; send only ${options.what}`,
      BODY_TOO_LARGE,
    );
  if (Number(req.headers['content-length'] ?? 0) > options.maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > options.maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  if (bytes.toString('utf8').trim() === '') {
    if (options.emptyIsObject) return {};
    throw new BadQuery(`the request has no body: send JSON with ${options.what}`, 'bad_body');
  }
  const decoded = decodeMessage(bytes, zod.unknown(), 'the request body');
  if (!decoded.ok) {
    const { message, issues } = decoded.failure;
    throw new BadQuery([message, ...issues].join('; '), 'bad_body');
  }
  return decoded.value;
}

/** An action's body (a signal, a cancel, a fork) is a few fields; anything larger is a mistake or an attack. */
const ACTION_BODY_MAX_BYTES = 64 * 1024;

/** An action's body as JSON (`{}` when empty and `emptyIsObject`), at most 64 KiB. */
export function readJson(req: IncomingMessage, emptyIsObject: boolean): Promise<unknown> {
  return readJsonBody(req, { maxBytes: ACTION_BODY_MAX_BYTES, emptyIsObject, what: "the action's fields" });
}
