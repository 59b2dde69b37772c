import { createHash } from 'node:crypto';
import { DEFAULT_TENANT } from '@dura/contracts';
import { BadQuery } from './query-params';

/**
 * Ids a caller chooses through the API (a run's `Idempotency-Key` or `runId`, a fork's `runId`, a schedule's
 * `id`) live in the namespace of the tenant they are for: for tenant `default` the id itself, for any other
 * tenant the id behind the tenant's prefix, `t` and 16 hex digits of SHA-256 of the tenant's name
 * (`t5f3a…-nightly-report`). Two tenants' ids never collide, so a key another tenant uses answers exactly as
 * a free one, and nobody can take or learn another tenant's run or schedule id. Run ids stay run ids: the
 * run's subject is `dura.run.<runId>` and the run id is its submit's msg-id, as for every other run.
 * Docs: docs/security/tenants.md.
 */

/** Run ids only the scheduler (`sch-<schedule>-<tick>`) and event triggers (`trg-<trigger>-<key>`) start. */
export const RESERVED_RUN_ID_PREFIXES = ['sch-', 'trg-'] as const;

/** What an id of a tenant other than `default` starts with, before its separator. */
const TENANT_PREFIX_SHAPE = /^t[0-9a-f]{16}[-_]/;

/** The prefix of `tenant`'s ids (without separator); the same on every projector. */
export function tenantPrefix(tenant: string): string {
  return `t${createHash('sha256').update(`dura-tenant:${tenant}`, 'utf8').digest('hex').slice(0, 16)}`;
}

/**
 * The run id a caller's chosen id `key` names for a run of `tenant` (throws 400 for a reserved id, or one too
 * long once prefixed). An id that already carries the tenant's prefix (one the API answered) is kept.
 */
export function tenantRunId(tenant: string, key: string, what: string): string {
  const reserved = RESERVED_RUN_ID_PREFIXES.find((prefix) => key.startsWith(prefix));
  if (reserved)
    throw new BadQuery(
      `${what} "${key}" starts with "${reserved}", which only runs started by schedules ("sch-") and event triggers ("trg-") carry: choose an id without it`,
      'reserved_run_id',
    );
  return namespaced(tenant, key, { separator: '-', max: 128, what });
}

/** The stored id of `tenant`'s schedule `id` (the same rules as run ids, separator `_`, at most 64 characters). */
export function tenantScheduleId(tenant: string, id: string): string {
  return namespaced(tenant, id, { separator: '_', max: 64, what: 'the schedule id' });
}

function namespaced(
  tenant: string,
  id: string,
  rule: { separator: '-' | '_'; max: number; what: string },
): string {
  if (tenant === DEFAULT_TENANT) {
    if (TENANT_PREFIX_SHAPE.test(id))
      throw new BadQuery(
        `${rule.what} "${id}" starts like the ids of another tenant ("t", 16 hex digits and "${rule.separator}"): choose another id`,
        'reserved_run_id',
      );
    return id;
  }
  const prefix = `${tenantPrefix(tenant)}${rule.separator}`;
  if (id.startsWith(prefix)) return id;
  if (prefix.length + id.length > rule.max)
    throw new BadQuery(
      `${rule.what} "${id}" is too long: ids of tenant ${tenant} start with "${prefix}", so choose at most ${rule.max - prefix.length} characters`,
      'bad_id',
    );
  return `${prefix}${id}`;
}
