import { fileURLToPath } from 'node:url';
import type { DbHandle } from '@dura/db';

/** Where drizzle-kit writes this service's migrations (`npx drizzle-kit generate` in services/projector). */
export const PROJECTOR_MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));

export function migrateProjector(handle: DbHandle): Promise<void> {
  return handle.migrate({ folder: PROJECTOR_MIGRATIONS, table: '__dura_projector_migrations' });
}
