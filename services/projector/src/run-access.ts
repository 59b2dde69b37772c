import { and, eq } from 'drizzle-orm';
import type { Db } from '@dura/db';
import { tenantFilter, type Caller } from './auth/caller';
import { runs } from './db/schema';

/**
 * Resolves when the caller may see the run, else throws what `notFound` builds: a run of another tenant
 * answers exactly as a run that does not exist, so a caller cannot learn which run ids other tenants use.
 * A caller of every tenant (an operator, or an API without credentials) is not checked: its answers stay
 * what they were before tenants, including for runs not projected yet.
 */
export async function assertVisible(
  db: Db,
  caller: Caller,
  runId: string,
  notFound: () => Error,
): Promise<void> {
  const tenant = tenantFilter(caller);
  if (tenant === undefined) return;
  const [row] = await db
    .select({ runId: runs.runId })
    .from(runs)
    .where(and(eq(runs.runId, runId), eq(runs.tenant, tenant)));
  if (!row) throw notFound();
}
