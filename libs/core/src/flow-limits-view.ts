/**
 * The shared flow-control state as operators read it (`GET /flow/limits`, `dura limits`, the console's Limits
 * page): one row per limit, declared or in use. Pure: the caller reads the entries and gives the time.
 */
import type { DeclaredLimit, FlowLimitRow, FlowLimitsResponse } from '@dura/contracts';
import { admittableOf, RATES, refilled, type LimitRecord, type ModelLimit } from './flow-limits';

/** A concurrency key's record is the entry `key:<key>`; a model limit's, `provider/model[@tenant]`. */
export const CONCURRENCY_KEY_PREFIX = 'key:';
/**
 * Planners write their declarations again every `DECLARATION_REFRESH_MS`; one not written again within
 * `DECLARATION_FRESH_MS` is from a replica that stopped or was reconfigured, and no longer counts.
 */
export const DECLARATION_REFRESH_MS = 5 * 60_000;
export const DECLARATION_FRESH_MS = 3 * DECLARATION_REFRESH_MS;

/** What one planner declared for a limit, and when it last said so. */
export interface LimitDeclaration {
  limit: ModelLimit;
  /** ms since the epoch. */
  at: number;
}

/** The key of the record a declared limit is written under (`*`: one record per tenant, `model@tenant`). */
export function declarationKey(limit: ModelLimit): string {
  return limit.tenant === undefined ? limit.model : `${limit.model}@${limit.tenant}`;
}

/** The figures of a declaration, in a fixed order: two declarations differ when these differ. */
export function declaredFigures(limit: ModelLimit): DeclaredLimit {
  const figures: DeclaredLimit = {};
  if (limit.requestsPerMinute !== undefined) figures.requestsPerMinute = limit.requestsPerMinute;
  if (limit.inputTokensPerMinute !== undefined) figures.inputTokensPerMinute = limit.inputTokensPerMinute;
  if (limit.outputTokensPerMinute !== undefined) figures.outputTokensPerMinute = limit.outputTokensPerMinute;
  if (limit.concurrentCalls !== undefined) figures.concurrentCalls = limit.concurrentCalls;
  return figures;
}

/** A stable text for the whole declaration (figures, burst, headroom, weights): the identity of a variant. */
export function declarationText(limit: ModelLimit): string {
  const { model, tenant, burstSeconds, headroomSeconds, weights } = limit;
  const sortedWeights = weights ? Object.fromEntries(Object.entries(weights).sort()) : undefined;
  return JSON.stringify({
    model,
    tenant,
    ...declaredFigures(limit),
    burstSeconds,
    headroomSeconds,
    sortedWeights,
  });
}

const round = (share: number): number => Math.round(share * 1000) / 1000;

/** Every declaration that counts, by key: the latest, and a warning when replicas declare different ones. */
function currentDeclarations(
  declarations: readonly LimitDeclaration[],
  now: number,
): { byKey: Map<string, ModelLimit>; warnings: string[] } {
  const grouped = new Map<string, LimitDeclaration[]>();
  for (const d of declarations) {
    const key = declarationKey(d.limit);
    grouped.set(key, [...(grouped.get(key) ?? []), d]);
  }
  const byKey = new Map<string, ModelLimit>();
  const warnings: string[] = [];
  for (const [key, all] of [...grouped].sort(([a], [b]) => a.localeCompare(b))) {
    const fresh = all.filter((d) => d.at >= now - DECLARATION_FRESH_MS);
    const counted = (fresh.length > 0 ? fresh : all).sort((a, b) => b.at - a.at);
    const latest = counted[0];
    if (!latest) continue;
    byKey.set(key, latest.limit);
    const variants = new Map(counted.map((d) => [declarationText(d.limit), d.limit]));
    if (variants.size > 1)
      warnings.push(
        `replicas declare different limits for ${key}: ${[...variants.values()]
          .map((limit) => JSON.stringify(declaredFigures(limit)))
          .join(' vs ')}; give every planner and worker the same DURA_MODEL_LIMITS (after a change, this ` +
          `shows until the old replicas' declarations are ${DECLARATION_FRESH_MS / 60_000} minutes old)`,
      );
  }
  return { byKey, warnings };
}

/** The declaration a record is under: its own key's, else its model's per-tenant (`*`) one. */
function declarationOf(
  key: string,
  byKey: ReadonlyMap<string, ModelLimit>,
): { limit?: ModelLimit; model: string; tenant?: string } {
  const exact = byKey.get(key);
  if (exact) return { limit: exact, model: exact.model, ...(exact.tenant ? { tenant: exact.tenant } : {}) };
  const at = key.lastIndexOf('@');
  if (at <= 0) return { model: key };
  const model = key.slice(0, at);
  const tenant = key.slice(at + 1);
  const perTenant = byKey.get(`${model}@*`);
  return { ...(perTenant ? { limit: perTenant } : {}), model, tenant };
}

function waitingOf(record: LimitRecord | undefined, now: number): FlowLimitRow['waiting'] {
  const queue = Object.values(record?.queue ?? {}).filter((q) => q.until > now).length;
  const inLine = Object.values(record?.line ?? {}).filter((entry) => entry.until > now);
  const byTenant: Record<string, number> = {};
  for (const entry of inLine) byTenant[entry.tenant] = (byTenant[entry.tenant] ?? 0) + 1;
  return { total: queue + inLine.length, queue, line: inLine.length, byTenant };
}

function stateOf(
  record: LimitRecord | undefined,
  limit: ModelLimit | undefined,
  slotLimit: number | undefined,
  now: number,
): Pick<FlowLimitRow, 'available' | 'slots' | 'waiting' | 'throttle'> {
  const available: FlowLimitRow['available'] = {};
  if (limit) {
    const levels = record ? refilled(record, limit, now).levels : {};
    for (const { rate, per } of RATES) {
      const perMinute = limit[per] as number | undefined;
      if (perMinute === undefined) continue;
      const admittable = admittableOf(limit, perMinute);
      available[rate] = round((levels[rate] ?? admittable) / admittable);
    }
  }
  const inUse = Object.values(record?.slots ?? {}).filter((until) => until > now).length;
  const throttle = record?.throttle && record.throttle.until > now ? record.throttle : undefined;
  return {
    available,
    slots: { inUse, ...(slotLimit === undefined ? {} : { limit: slotLimit }) },
    waiting: waitingOf(record, now),
    ...(throttle
      ? { throttle: { factor: throttle.factor, until: new Date(throttle.until).toISOString() } }
      : {}),
  };
}

/**
 * One row per limit: each record in the bucket (by its decoded key), and each declared limit no call has
 * used yet (shown full). Model limits first, by key, then concurrency keys.
 */
export function limitRows(
  records: readonly { key: string; record: LimitRecord }[],
  declarations: readonly LimitDeclaration[],
  now: number,
): FlowLimitsResponse {
  const { byKey, warnings } = currentDeclarations(declarations, now);
  const rows: FlowLimitRow[] = [];
  const used = new Set<string>();
  for (const { key, record } of records) {
    if (key.startsWith(CONCURRENCY_KEY_PREFIX)) {
      const concurrencyKey = key.slice(CONCURRENCY_KEY_PREFIX.length);
      rows.push({
        key,
        kind: 'concurrency key',
        concurrencyKey,
        ...(record.keyLimit === undefined ? {} : { declared: { concurrentCalls: record.keyLimit } }),
        ...stateOf(record, undefined, record.keyLimit, now),
      });
      continue;
    }
    const { limit, model, tenant } = declarationOf(key, byKey);
    if (limit) used.add(declarationKey(limit));
    rows.push({
      key,
      kind: 'model',
      model,
      ...(tenant === undefined ? {} : { tenant }),
      ...(limit ? { declared: declaredFigures(limit) } : {}),
      ...stateOf(record, limit, limit?.concurrentCalls, now),
    });
  }
  for (const [key, limit] of byKey) {
    if (used.has(key)) continue;
    rows.push({
      key,
      kind: 'model',
      model: limit.model,
      ...(limit.tenant === undefined ? {} : { tenant: limit.tenant }),
      declared: declaredFigures(limit),
      ...stateOf(undefined, limit, limit.concurrentCalls, now),
    });
  }
  const order = (row: FlowLimitRow) => `${row.kind === 'model' ? 0 : 1}${row.key}`;
  rows.sort((a, b) => order(a).localeCompare(order(b)));
  return { at: new Date(now).toISOString(), limits: rows, warnings };
}

/** The columns of the limits table (CLI and console), in order. */
export const LIMIT_COLUMNS = [
  'limit',
  'declared',
  'available now',
  'in use',
  'waiting',
  'throttled',
] as const;

const percent = (share: number): string => `${Math.round(share * 100)}%`;

/** A row as the table shows it: one text per column of `LIMIT_COLUMNS`. */
export function limitCells(row: FlowLimitRow): string[] {
  const what =
    row.kind === 'concurrency key'
      ? `concurrency key ${row.concurrencyKey ?? ''}`
      : `${row.model ?? row.key}${row.tenant === '*' ? ' per tenant' : row.tenant ? ` for tenant ${row.tenant}` : ''}`;
  const d = row.declared;
  const declared = d
    ? [
        d.requestsPerMinute === undefined ? '' : `${d.requestsPerMinute} req/min`,
        d.inputTokensPerMinute === undefined ? '' : `${d.inputTokensPerMinute} in/min`,
        d.outputTokensPerMinute === undefined ? '' : `${d.outputTokensPerMinute} out/min`,
        d.concurrentCalls === undefined
          ? ''
          : `${d.concurrentCalls} ${row.kind === 'model' ? 'concurrent' : 'at once'}`,
      ]
        .filter(Boolean)
        .join(', ')
    : 'not declared';
  const a = row.available;
  const available =
    [
      a.requests === undefined ? '' : `req ${percent(a.requests)}`,
      a.input === undefined ? '' : `in ${percent(a.input)}`,
      a.output === undefined ? '' : `out ${percent(a.output)}`,
    ]
      .filter(Boolean)
      .join(', ') || '-';
  const inUse =
    row.slots.limit !== undefined
      ? `${row.slots.inUse}/${row.slots.limit}`
      : row.slots.inUse > 0
        ? String(row.slots.inUse)
        : '-';
  const tenants = Object.entries(row.waiting.byTenant)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([tenant, n]) => `${tenant} ${n}`);
  if (row.waiting.queue > 0) tenants.push(`${row.waiting.queue} for a slot`);
  const waiting = `${row.waiting.total}${row.waiting.total > 0 ? ` (${tenants.join(', ')})` : ''}`;
  const throttled = row.throttle ? `until ${row.throttle.until} (rate x${row.throttle.factor})` : 'no';
  return [what, declared, available, inUse, waiting, throttled];
}
