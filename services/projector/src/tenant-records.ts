import { TriggerIdSchema } from '@dura/contracts';
import { ALL_TENANTS, type Caller } from './auth/caller';
import type { ApiRoute } from './auth/guard';
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
  const idOf = (params: Record<string, string>, caller: Caller): string => {
    const parsed = TriggerIdSchema.safeParse(params['id']);
    if (!parsed.success)
      throw new BadQuery(`path parameter id is not a ${rules.what} id (letters, digits, "_")`);
    return caller.tenant === ALL_TENANTS ? parsed.data : rules.namespaced(caller.tenant, parsed.data);
  };
  const visible = async (caller: Caller, id: string): Promise<R> => {
    const record = await rules.read(id);
    if (!record || (caller.tenant !== ALL_TENANTS && record.spec.tenant !== caller.tenant))
      throw rules.notFound(id);
    return record;
  };
  return {
    idOf,
    visible,
    /**
     * `DELETE path` (scope `schedule`): removes the record the path names with `remove` once the caller may see
     * it, and answers `{ id, deleted: true }`.
     */
    deleteRoute: (path: string, remove: (id: string) => Promise<unknown>): ApiRoute => ({
      method: 'DELETE',
      path,
      scope: 'schedule',
      async handle({ params, caller }) {
        const id = idOf(params, caller);
        await visible(caller, id);
        await remove(id);
        return { status: 200, body: { id, deleted: true } };
      },
    }),
  };
}
