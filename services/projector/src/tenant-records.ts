import { TriggerIdSchema } from '@dura/contracts';
import { ALL_TENANTS, type Caller } from './auth/caller';
import { BadQuery } from './query-params';

/**
 * How a route finds a tenant's record by the id in its path (a schedule, an event trigger): `idOf` is the
 * stored id the path names (for a tenant's caller, in the tenant's namespace: `namespaced`), and `visible` the
 * record if the caller may see it. Another tenant's record is `notFound`, like one that does not exist.
 */
export function tenantRecords<R extends { spec: { tenant: string } }>(rules: {
  /** "schedule", "trigger": what the path's id names, for the 400. */
  what: string;
  namespaced: (tenant: string, id: string) => string;
  /** The record; undefined (or a `notFound` thrown) when there is none. */
  read: (id: string) => Promise<R | undefined>;
  notFound: (id: string) => Error;
}) {
  return {
    idOf: (params: Record<string, string>, caller: Caller): string => {
      const parsed = TriggerIdSchema.safeParse(params['id']);
      if (!parsed.success)
        throw new BadQuery(`path parameter id is not a ${rules.what} id (letters, digits, "_")`);
      return caller.tenant === ALL_TENANTS ? parsed.data : rules.namespaced(caller.tenant, parsed.data);
    },
    visible: async (caller: Caller, id: string): Promise<R> => {
      const record = await rules.read(id);
      if (!record || (caller.tenant !== ALL_TENANTS && record.spec.tenant !== caller.tenant))
        throw rules.notFound(id);
      return record;
    },
  };
}
