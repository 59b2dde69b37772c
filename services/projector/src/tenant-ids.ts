import { createHash } from 'node:crypto';
import { DEFAULT_TENANT } from '@dura/contracts';
import { BadQuery } from './query-params';

/**
 * Ids a caller chooses through the API (a run's `Idempotency-Key` or `runId`, a fork's `runId`, a schedule's
 * or an event trigger's `id`, an event's `id` and subject) live in the namespace of the tenant they are for: for tenant `default` the id itself, for any other
 * tenant the id behind the tenant's prefix, `t` and 16 hex digits of SHA-256 of the tenant's name
 * (`t5f3a…-nightly-report`). Two tenants' ids never collide, so a key another tenant uses answers exactly as
 * a free one, and nobody can take or learn another tenant's run or schedule id. Run ids stay run ids: the
 * run's subject is `dura.run.<runId>` and the run id is its submit's msg-id, as for every other run.
 * Docs: docs/security/tenants.md.
 */

/**
 * Run ids only the scheduler (`sch-<schedule>-<tick>`), event triggers (`trg-<trigger>-<key>`) and debounce
 * windows of `POST /runs` (`deb-<key token>-<opened>`) start.
 */
export const RESERVED_RUN_ID_PREFIXES = ['sch-', 'trg-', 'deb-'] as const;

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
      `${what} "${key}" starts with "${reserved}", which only runs started by schedules ("sch-"), event triggers ("trg-") and debounce windows ("deb-") carry: choose an id without it`,
      'reserved_run_id',
    );
  return namespaced(tenant, key, { separator: '-', max: 128, what });
}

/** The run id of a debounce window of `tenant` (`id` is `deb-…`, reserved to windows, so not checked as a caller's key). */
export function tenantWindowRunId(tenant: string, id: string): string {
  return namespaced(tenant, id, { separator: '-', max: 128, what: 'the window run id' });
}

/** The stored id of `tenant`'s schedule `id` (the same rules as run ids, separator `_`, at most 64 characters). */
export function tenantScheduleId(tenant: string, id: string): string {
  return namespaced(tenant, id, { separator: '_', max: 64, what: 'the schedule id' });
}

/** The stored id of `tenant`'s event trigger `id` (as schedule ids: separator `_`, at most 64 characters). */
export function tenantTriggerId(tenant: string, id: string): string {
  return namespaced(tenant, id, { separator: '_', max: 64, what: 'the trigger id' });
}

/** The message id of `tenant`'s event `id` (separator `-`, at most 60 characters: the run ids it starts keep it). */
export function tenantEventId(tenant: string, id: string): string {
  return namespaced(tenant, id, { separator: '-', max: 60, what: 'the event id' });
}

const EVENT_ROOT = 'dura.event.';

/**
 * The subject (or a trigger's subject pattern) `subject` names for `tenant`: for tenant `default` the subject
 * itself, for any other tenant the subject with the tenant's prefix as its first token under `dura.event.`
 * (`dura.event.t5f3a….orders.created`). So a tenant's events reach only its own triggers, and its triggers
 * hear only its own events. The first token must be a name (no wildcard): a pattern such as `dura.event.>`
 * would hear every tenant's events.
 */
export function tenantEventSubject(tenant: string, subject: string, what: string): string {
  const rest = subject.startsWith(EVENT_ROOT) ? subject.slice(EVENT_ROOT.length) : '';
  const first = rest.split('.')[0] ?? '';
  if (first === '' || first === '*' || first === '>')
    throw new BadQuery(
      `${what} "${subject}" must name its first token under "${EVENT_ROOT}" (e.g. "dura.event.orders.>"): a wildcard there would hear other tenants' events`,
      'bad_subject',
    );
  if (tenant !== DEFAULT_TENANT && first === tenantPrefix(tenant)) return subject;
  if (TENANT_PREFIX_SHAPE.test(`${first}-`))
    throw new BadQuery(
      `${what} "${subject}" starts like the subjects of another tenant ("t" and 16 hex digits): choose another first token`,
      'bad_subject',
    );
  if (tenant === DEFAULT_TENANT) return subject;
  const namespaced = `${EVENT_ROOT}${tenantPrefix(tenant)}.${rest}`;
  if (namespaced.length > 200)
    throw new BadQuery(
      `${what} "${subject}" is too long once in tenant ${tenant}'s namespace ("${namespaced}"): at most 200 characters`,
      'bad_subject',
    );
  return namespaced;
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
