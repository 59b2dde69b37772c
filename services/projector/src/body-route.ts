import type { z } from 'zod';
import type { HttpResponse } from '@dura/service-kit';
import type { ApiRoute } from './auth/guard';
import { readMessageBody, type ReadBodyOptions } from './request-body';

/** The body a route reads: its schema, what it is (`an event`) and what it should hold (`readMessageBody`). */
export interface BodySpec<S extends z.ZodType> {
  schema: S;
  what: string;
  holds: string;
  limits?: Omit<ReadBodyOptions, 'what'>;
}

/** `POST path` (scope `scope`) whose JSON body, parsed with `body`, `handle` answers. */
export function postRoute<S extends z.ZodType>(
  path: string,
  scope: ApiRoute['scope'],
  body: BodySpec<S>,
  handle: (parsed: z.infer<S>, request: Parameters<ApiRoute['handle']>[0]) => Promise<HttpResponse>,
): ApiRoute {
  return {
    method: 'POST',
    path,
    scope,
    async handle(request) {
      const parsed = await readMessageBody(request.req, body.schema, body.what, body.holds, body.limits);
      return handle(parsed, request);
    },
  };
}
