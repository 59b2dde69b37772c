import { z } from 'zod';
import type { JsonValue } from '@dura/contracts';
import { defineTool, ToolError } from '../tool';

const HttpRequestArgs = z.object({
  url: z.url(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.unknown().optional(),
  timeoutMs: z.number().int().positive().max(300_000).optional(),
});

/**
 * An HTTP call that carries the call's `Idempotency-Key` header, so a compliant server applies it once.
 * Responses below 500 are results the model can read; 5xx, 429 and network errors are retried.
 */
export const httpRequestTool = defineTool({
  name: 'http.request',
  description: 'Send an HTTP request; the Idempotency-Key header is set from the call.',
  input: HttpRequestArgs,
  safety: 'idempotent',
  timeoutMs: 30_000,
  async execute(args, ctx) {
    const signal = args.timeoutMs
      ? AbortSignal.any([ctx.signal, AbortSignal.timeout(args.timeoutMs)])
      : ctx.signal;
    const hasBody = args.body !== undefined && args.method !== 'GET';
    let response: Response;
    try {
      response = await fetch(args.url, {
        method: args.method,
        headers: {
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
          ...withoutIdempotencyKey(args.headers),
          'idempotency-key': ctx.idempotencyKey,
        },
        ...(hasBody ? { body: JSON.stringify(args.body) } : {}),
        signal,
      });
    } catch (err) {
      throw new ToolError(
        'http_unreachable',
        `${args.method} ${args.url} failed: ${(err as Error).message}`,
        {
          retryable: true,
          cause: err,
        },
      );
    }
    const text = await response.text();
    if (response.status >= 500 || response.status === 429) {
      const retryAfter = Number(response.headers.get('retry-after'));
      throw new ToolError('http_status', `${args.method} ${args.url} answered ${response.status}`, {
        retryable: true,
        ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      });
    }
    return { status: response.status, body: parseBody(text, response.headers.get('content-type')) };
  },
});

/** The call's key is the only Idempotency-Key a request may carry, whatever case the caller wrote. */
function withoutIdempotencyKey(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).filter(([name]) => name.toLowerCase() !== 'idempotency-key'),
  );
}

function parseBody(text: string, contentType: string | null): JsonValue {
  if (contentType?.includes('json')) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      return text;
    }
  }
  return text;
}
