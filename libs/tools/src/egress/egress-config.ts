import * as z from 'zod';
import { CONFIG_ERROR_CODE, DuraError } from '@dura/contracts';
import { ALLOW_ENTRY_FORMAT, parseAllowList } from './allow-list';
import type { EgressPolicy } from './egress-policy';

/**
 * The `http.request` settings, read by the planner and every gateway (they must agree: a tool the planner
 * does not register is refused at submission). Spread into each service's config schema.
 */
export const httpRequestConfigShape = {
  DURA_HTTP_REQUEST_ENABLED: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .describe(
      'Registers the built-in `http.request` tool (under the egress policy, see docs/security/egress.md); off: the tool does not exist. Same on planner and gateways.',
    ),
  DURA_EGRESS_ALLOW: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      for (const problem of parseAllowList(value).problems)
        ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe(
      `Where \`http.request\` may connect, comma-separated: ${ALLOW_ENTRY_FORMAT}. Unset: every public address. Loopback, private, link-local, metadata and reserved addresses only through an IP or CIDR entry naming them.`,
    ),
  DURA_EGRESS_MAX_REDIRECTS: z.coerce
    .number()
    .int()
    .min(0)
    .max(20)
    .default(0)
    .describe(
      'Redirects `http.request` follows, each hop checked again; 0: a redirect is returned as the result.',
    ),
  DURA_EGRESS_MAX_RESPONSE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1_048_576)
    .describe('Response body bytes `http.request` reads at most; a larger response fails the call.'),
};

/** The parsed settings, as every service's config holds them. */
export interface HttpRequestSettings {
  DURA_HTTP_REQUEST_ENABLED?: boolean | undefined;
  DURA_EGRESS_ALLOW?: string | undefined;
  DURA_EGRESS_MAX_REDIRECTS?: number | undefined;
  DURA_EGRESS_MAX_RESPONSE_BYTES?: number | undefined;
}

/** The egress policy the settings describe (the allow list was validated when the config was read). */
export function egressPolicyFrom(settings: HttpRequestSettings): EgressPolicy {
  const { entries, problems } = parseAllowList(settings.DURA_EGRESS_ALLOW);
  if (problems.length > 0)
    throw new DuraError(CONFIG_ERROR_CODE, `DURA_EGRESS_ALLOW: ${problems.join('; ')}`);
  return {
    entries,
    maxRedirects: settings.DURA_EGRESS_MAX_REDIRECTS ?? 0,
    maxResponseBytes: settings.DURA_EGRESS_MAX_RESPONSE_BYTES ?? 1_048_576,
  };
}
