import { and, asc, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import { DuraError } from '@dura/contracts';
import type { Db } from '@dura/db';
import type { Route } from '@dura/service-kit';
import { projectionErrors, runEvents, runs } from './db/schema';

const MAX_PAGE = 1000;

class NotFound extends DuraError {
  constructor(message: string) {
    super('run_not_found', message);
  }
}

class BadQuery extends DuraError {
  constructor(message: string) {
    super('bad_query', message);
  }
}

function intParam(
  query: URLSearchParams,
  name: string,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
  min = 0,
): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new BadQuery(`query parameter ${name} must be an integer >= ${min}, got "${raw}"`);
  return Math.min(value, max);
}

/** The projector's read API. The run state it serves is the same fold every other component uses. */
export function projectorRoutes(db: Db, position: () => number): Route[] {
  return [
    {
      method: 'GET',
      path: '/healthz',
      handle: () => Promise.resolve({ status: 200, body: { ok: true, position: position() } }),
    },
    {
      method: 'GET',
      path: '/runs',
      async handle({ query }) {
        const limit = intParam(query, 'limit', 50, MAX_PAGE, 1);
        const status = query.get('status');
        const where: SQL[] = status ? [eq(runs.status, status)] : [];
        const rows = await db
          .select({
            runId: runs.runId,
            status: runs.status,
            steps: runs.steps,
            lastSeq: runs.lastSeq,
            createdAt: runs.createdAt,
            updatedAt: runs.updatedAt,
          })
          .from(runs)
          .where(and(...where))
          .orderBy(desc(runs.updatedAt))
          .limit(limit);
        return { status: 200, body: { runs: rows } };
      },
    },
    {
      method: 'GET',
      path: '/runs/:id',
      async handle({ params }) {
        const [row] = await db
          .select({ state: runs.state })
          .from(runs)
          .where(eq(runs.runId, params.id ?? ''));
        if (!row) throw new NotFound(`no run ${params.id} in the projection (position ${position()})`);
        return { status: 200, body: row.state };
      },
    },
    {
      method: 'GET',
      path: '/runs/:id/events',
      async handle({ params, query }) {
        const fromSeq = intParam(query, 'fromSeq', 0);
        const limit = intParam(query, 'limit', 100, MAX_PAGE, 1);
        const rows = await db
          .select({ event: runEvents.event, seq: runEvents.seq })
          .from(runEvents)
          .where(and(eq(runEvents.runId, params.id ?? ''), gte(runEvents.seq, fromSeq)))
          .orderBy(asc(runEvents.seq))
          .limit(limit + 1);
        const page = rows.slice(0, limit);
        const next = rows.length > limit ? rows[limit]?.seq : undefined;
        return {
          status: 200,
          body: { events: page.map((r) => r.event), ...(next === undefined ? {} : { nextFromSeq: next }) },
        };
      },
    },
    {
      method: 'GET',
      path: '/projection-errors',
      async handle({ query }) {
        const before = intParam(query, 'beforeSeq', Number.MAX_SAFE_INTEGER);
        const rows = await db
          .select()
          .from(projectionErrors)
          .where(lt(projectionErrors.seq, before))
          .orderBy(desc(projectionErrors.seq))
          .limit(100);
        return { status: 200, body: { errors: rows } };
      },
    },
  ];
}
