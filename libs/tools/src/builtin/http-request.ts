import * as z from 'zod';
import type { JsonValue } from '@dura/contracts';
import { defineTool, ToolError, type ToolDefinition } from '../tool';
import { egressFetch, systemResolver, type Resolver } from '../egress/egress-fetch';
import type { EgressPolicy } from '../egress/egress-policy';

const HttpRequestArgs = z.object({
  url: z.url(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.unknown().optional(),
  timeoutMs: z.number().int().positive().max(300_000).optional(),
});

export interface HttpRequestToolOptions {
  policy: EgressPolicy;
  /** Host name resolution; the system resolver unless a test injects one. */
  resolve?: Resolver;
}

/**
 * An HTTP call under the deployment's egress policy, carrying the call's `Idempotency-Key` header so a
 * compliant server applies it once. Refused targets fail with `egress_denied` (not retried) before any
 * connection; responses below 500 are results the model can read; 5xx, 429 and network errors are retried.
 */
export function createHttpRequestTool(
  options: HttpRequestToolOptions,
): ToolDefinition<typeof HttpRequestArgs> {
  const resolve = options.resolve ?? systemResolver;
  return defineTool({
    name: 'http.request',
    description:
      'Send an HTTP request to a host the deployment allows; the Idempotency-Key header is set from the call.',
    input: HttpRequestArgs,
    safety: 'idempotent',
    timeoutMs: 30_000,
    async execute(args, ctx) {
      const signal = args.timeoutMs
        ? AbortSignal.any([ctx.signal, AbortSignal.timeout(args.timeoutMs)])
        : ctx.signal;
      const hasBody = args.body !== undefined && args.method !== 'GET';
      const response = await egressFetch(options.policy, resolve, {
        url: args.url,
        method: args.method,
        headers: {
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
          ...withoutIdempotencyKey(args.headers),
          'idempotency-key': ctx.idempotencyKey,
        },
        ...(hasBody ? { body: JSON.stringify(args.body) } : {}),
        signal,
      });
      if (response.status >= 500 || response.status === 429) {
        const retryAfter = Number(response.headers['retry-after']);
        throw new ToolError('http_status', `${args.method} ${args.url} answered ${response.status}`, {
          retryable: true,
          ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
        });
      }
      const location = response.headers.location;
      const text = response.body.toString('utf8');
      return {
        status: response.status,
        body: parseBody(text, response.headers['content-type']),
        // A redirect not followed (DURA_EGRESS_MAX_REDIRECTS=0): where it points, for the model to decide.
        ...(response.status >= 300 && response.status < 400 && location ? { location } : {}),
      };
    },
  });
}

/** The call's key is the only Idempotency-Key a request may carry, whatever case the caller wrote. */
function withoutIdempotencyKey(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).filter(([name]) => name.toLowerCase() !== 'idempotency-key'),
  );
}

function parseBody(text: string, contentType: string | undefined): JsonValue {
  if (contentType?.includes('json')) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      return text;
    }
  }
  return text;
}
