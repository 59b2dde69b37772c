import { sql, type SQL } from 'drizzle-orm';
import {
  MAX_TAG_LENGTH,
  RUN_LIST_DEFAULT_LIMIT,
  RUN_LIST_MAX_LIMIT,
  RUN_LIST_SORTS,
  RUN_STATUSES,
  ToolNameSchema,
  type RunListResponse,
  type RunSummary,
} from '@dura/contracts';
import { rowsOf, type Db } from '@dura/db';
import { isIsoInstant } from './iso-time';
import { decodeCursor, encodeCursor, type ListSort } from './list-cursor';
import { BadQuery, intParam } from './query-params';
import { runs } from './db/schema';

/** A parsed `GET /runs` query. */
export interface ListRunsQuery {
  statuses: string[];
  tags: string[];
  tools: string[];
  createdAfter?: string;
  createdBefore?: string;
  sort: ListSort;
  limit: number;
  after?: { key: string; runId: string };
  /** Only this tenant's runs (a tenant-scoped caller, or an operator's `tenant=`); absent: every tenant's. */
  tenant?: string;
  /** Runs of this registered agent, and of this pinned version of it. */
  agent?: string;
  agentVersion?: string;
  /** Runs whose metadata holds every one of these pairs. */
  metadata: Record<string, string>;
  /** Runs whose id starts with this text. */
  idPrefix?: string;
}

function timeParam(query: URLSearchParams, name: string): string | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!isIsoInstant(raw))
    throw new BadQuery(
      `query parameter ${name} must be an ISO 8601 date or date-time with a zone, on a real calendar day (e.g. 2025-01-31 or 2025-01-31T09:00:00Z), got "${raw}"`,
    );
  return raw;
}

function listParam(query: URLSearchParams, name: string, check: (value: string) => string | undefined) {
  const values = query
    .getAll(name)
    .flatMap((raw) => (name === 'status' ? raw.split(',') : [raw]))
    .map((value) => value.trim());
  for (const value of values) {
    const problem = check(value);
    if (problem) throw new BadQuery(`query parameter ${name}: ${problem}`);
  }
  return [...new Set(values)];
}

/** Reads and checks the query of `GET /runs`; every problem is a 400 naming the parameter. */
export function parseListQuery(query: URLSearchParams): ListRunsQuery {
  const statuses = listParam(query, 'status', (value) =>
    (RUN_STATUSES as readonly string[]).includes(value)
      ? undefined
      : `"${value}" is not a run status; use one of ${RUN_STATUSES.join(', ')}`,
  );
  const label = (value: string) =>
    value.length === 0 || value.length > MAX_TAG_LENGTH
      ? `"${value}" must have 1 to ${MAX_TAG_LENGTH} characters`
      : undefined;
  const sortRaw = query.get('sort') ?? 'updated_desc';
  const sort = RUN_LIST_SORTS.find((s) => s === sortRaw);
  if (!sort)
    throw new BadQuery(`query parameter sort must be one of ${RUN_LIST_SORTS.join(', ')}, got "${sortRaw}"`);
  const cursor = query.get('cursor');
  const createdAfter = timeParam(query, 'createdAfter');
  const createdBefore = timeParam(query, 'createdBefore');
  const text = (name: string): string | undefined => {
    const raw = query.get(name)?.trim();
    if (raw === undefined || raw === '') return undefined;
    const problem = label(raw) ?? (raw.includes('\u0000') ? 'must not contain NUL' : undefined);
    if (problem) throw new BadQuery(`query parameter ${name}: ${problem}`);
    return raw;
  };
  const tenant = text('tenant');
  const agent = text('agent');
  const agentVersion = text('agentVersion');
  const idPrefix = text('idPrefix');
  return {
    ...(tenant === undefined ? {} : { tenant }),
    ...(agent === undefined ? {} : { agent }),
    ...(agentVersion === undefined ? {} : { agentVersion }),
    ...(idPrefix === undefined ? {} : { idPrefix }),
    metadata: metadataParam(query),
    statuses,
    tags: listParam(query, 'tag', label),
    tools: listParam(query, 'tool', (value) =>
      ToolNameSchema.safeParse(value).success
        ? undefined
        : `"${value}" is not a tool name (dotted lower-case words, e.g. http.request)`,
    ),
    ...(createdAfter === undefined ? {} : { createdAfter }),
    ...(createdBefore === undefined ? {} : { createdBefore }),
    sort,
    limit: intParam(query, 'limit', RUN_LIST_DEFAULT_LIMIT, { min: 1, max: RUN_LIST_MAX_LIMIT }),
    ...(cursor === null ? {} : { after: decodeCursor(cursor, sort) }),
  };
}

/** `meta=key:value` (repeatable): the run's metadata must hold every pair. */
function metadataParam(query: URLSearchParams): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const raw of query.getAll('meta')) {
    const at = raw.indexOf(':');
    if (at < 1 || raw.length > 1000 || raw.includes('\u0000'))
      throw new BadQuery(
        `query parameter meta must be key:value (e.g. meta=customer:acme), got "${raw.slice(0, 100)}"`,
      );
    pairs[raw.slice(0, at)] = raw.slice(at + 1);
  }
  return pairs;
}

const textArray = (values: string[]): SQL =>
  sql`array[${sql.join(
    values.map((value) => sql`${value}`),
    sql`, `,
  )}]::text[]`;

/**
 * One keyset page: `WHERE <filters> AND (sort_key, run_id) < (cursor) ORDER BY sort_key, run_id LIMIT n + 1`,
 * the shape the indexes in `db/schema.ts` serve as one range scan. The extra row only says whether a next
 * page exists. Sorting ties on `run_id` make the order total, so pages never overlap or skip a run of a
 * static list; a run updated while a client pages by `updated_desc` moves ahead of the cursor and is not
 * shown again in that pass.
 */
export async function listRuns(db: Db, q: ListRunsQuery): Promise<RunListResponse> {
  const rows = rowsOf<SummaryRow>(await db.execute(listRunsSql(q)));
  const page = rows.slice(0, q.limit).map(toSummary);
  const last = rows.length > q.limit ? rows[q.limit - 1] : undefined;
  if (!last) return { runs: page };
  const lastKey = q.sort === 'updated_desc' ? last.updated_iso : last.created_iso;
  return { runs: page, nextCursor: encodeCursor(q.sort, lastKey, last.run_id) };
}

/** The statement of one page (`limit + 1` rows); exported so tests can check its plan. */
export function listRunsSql(q: ListRunsQuery): SQL {
  const key = q.sort === 'updated_desc' ? sql`updated_at` : sql`created_at`;
  const descending = q.sort !== 'created_asc';
  const where: SQL[] = [];
  if (q.tenant !== undefined) where.push(sql`tenant = ${q.tenant}`);
  if (q.statuses.length > 0)
    where.push(
      sql`status in (${sql.join(
        q.statuses.map((s) => sql`${s}`),
        sql`, `,
      )})`,
    );
  if (q.tags.length > 0) where.push(sql`tags @> ${textArray(q.tags)}`);
  if (q.tools.length > 0) where.push(sql`tools @> ${textArray(q.tools)}`);
  if (q.agent !== undefined) where.push(sql`request->'agent'->>'name' = ${q.agent}`);
  if (q.agentVersion !== undefined) where.push(sql`state->'pinned'->>'version' = ${q.agentVersion}`);
  if (Object.keys(q.metadata).length > 0) where.push(sql`metadata @> ${JSON.stringify(q.metadata)}::jsonb`);
  if (q.idPrefix !== undefined) where.push(sql`starts_with(run_id, ${q.idPrefix})`);
  if (q.createdAfter) where.push(sql`created_at >= ${q.createdAfter}::timestamptz`);
  if (q.createdBefore) where.push(sql`created_at < ${q.createdBefore}::timestamptz`);
  if (q.after) {
    const bound = sql`(${q.after.key}::timestamptz, ${q.after.runId}::text)`;
    where.push(descending ? sql`(${key}, run_id) < ${bound}` : sql`(${key}, run_id) > ${bound}`);
  }
  const direction = descending ? sql`desc` : sql`asc`;
  return sql`
      select run_id, status, steps, pending_calls, last_error, tags, metadata,
             input_tokens::float8 as input_tokens, output_tokens::float8 as output_tokens,
             last_seq::float8 as last_seq, tenant,
             case when request #>> '{agent,kind}' = 'scripted' then 'scripted'
                  else coalesce(state #>> '{pinned,agent}', request #>> '{agent,name}', '-')
                       || coalesce('@' || coalesce(state #>> '{pinned,version}', request #>> '{agent,version}'), '')
             end as agent,
             request->'parent'->>'runId' as parent_run_id,
             jsonb_array_length(coalesce(state->'children', '[]'::jsonb)) as children,
             coalesce((state #>> '{budget,costUsd}')::float8, 0) as cost_usd,
             to_json(created_at) #>> '{}' as created_iso, to_json(updated_at) #>> '{}' as updated_iso
      from ${runs}
      ${where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``}
      order by runs.${key} ${direction}, runs.run_id ${direction}
      limit ${sql.raw(String(q.limit + 1))}`;
}

interface SummaryRow {
  run_id: string;
  status: string;
  steps: number;
  pending_calls: number;
  last_error: { code: string; message: string } | null;
  tags: string[];
  metadata: Record<string, string>;
  input_tokens: number;
  output_tokens: number;
  last_seq: number;
  tenant: string;
  agent: string;
  parent_run_id: string | null;
  children: number;
  cost_usd: number;
  /** The exact timestamps as ISO text (the cursor needs them to the microsecond). */
  created_iso: string;
  updated_iso: string;
}

function toSummary(row: SummaryRow): RunSummary {
  return {
    runId: row.run_id,
    status: row.status as RunSummary['status'],
    createdAt: new Date(row.created_iso).toISOString(),
    updatedAt: new Date(row.updated_iso).toISOString(),
    steps: row.steps,
    pendingCalls: row.pending_calls,
    lastError: row.last_error,
    usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
    tags: row.tags,
    metadata: row.metadata,
    lastSeq: row.last_seq,
    tenant: row.tenant,
    agent: row.agent,
    parentRunId: row.parent_run_id,
    children: Number(row.children),
    costUsd: row.cost_usd,
  };
}
