import { DEFAULT_TENANT } from '@dura/contracts';
import type { HttpResponse } from '@dura/service-kit';
import { ALL_TENANTS, type Caller } from './auth/caller';

/**
 * The tenant a body is for (a schedule, an event trigger): a tenant's caller may name only its own (or leave
 * it out); an operator (tenant `*`) names any, or gets `default`. Another tenant is `refused`: a 403
 * `tenant_forbidden` answer for the route to return as it is. The tenant is not validated here (the body's
 * schema does that).
 */
export function bodyTenant<T>(
  caller: Caller,
  asked: T | undefined,
  doing: string,
): { tenant: T | string } | { refused: HttpResponse } {
  if (caller.tenant === ALL_TENANTS) return { tenant: asked ?? DEFAULT_TENANT };
  if (asked === undefined || asked === caller.tenant) return { tenant: caller.tenant };
  return {
    refused: {
      status: 403,
      body: {
        error: {
          code: 'tenant_forbidden',
          message: `the credential "${caller.name}" ${doing} of tenant "${caller.tenant}", not ${JSON.stringify(asked)}: leave "tenant" out or use a token of that tenant`,
        },
      },
    },
  };
}
