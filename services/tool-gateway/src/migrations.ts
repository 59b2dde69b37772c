import { fileURLToPath } from 'node:url';
import type { DbHandle } from '@dura/db';

/** Where drizzle-kit writes this service's migrations (`npx drizzle-kit generate` in services/tool-gateway). */
export const GATEWAY_MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));

/** Applies the gateway's migrations; its own migrations table keeps it apart from other services sharing a database. */
export function migrateGateway(handle: DbHandle): Promise<void> {
  return handle.migrate({ folder: GATEWAY_MIGRATIONS, table: '__dura_gateway_migrations' });
}
