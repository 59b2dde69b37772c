import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { decodeMessage } from '@dura/contracts';
import { BODY_TOO_LARGE } from '@dura/service-kit';
import { BadQuery } from './query-params';

/** An action's body (a signal, a cancel, a fork) is a few fields; anything larger is a mistake or an attack. */
const MAX_BODY_BYTES = 64 * 1024;

/** The request body as JSON (`{}` when empty and `emptyIsObject`), at most `MAX_BODY_BYTES`. */
export async function readJson(req: IncomingMessage, emptyIsObject: boolean): Promise<unknown> {
  const tooLarge = () =>
    new BadQuery(
      `the request body exceeds ${MAX_BODY_BYTES} bytes; send only the action's fields`,
      BODY_TOO_LARGE,
    );
  // A declared length over the limit is refused before a byte is read.
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  if (bytes.toString('utf8').trim() === '') {
    if (emptyIsObject) return {};
    throw new BadQuery('the request has no body: send JSON such as {"name": "approve"}', 'bad_body');
  }
  // The same limits as every message (depth, sizes, UTF-8, storable text), before the schema recurses.
  const decoded = decodeMessage(bytes, z.unknown(), 'the request body');
  if (!decoded.ok) {
    const { message, issues } = decoded.failure;
    throw new BadQuery([message, ...issues].join('; '), 'bad_body');
  }
  return decoded.value;
}
