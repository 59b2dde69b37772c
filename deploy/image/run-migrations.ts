// Applies one service's Postgres migrations and exits: the init step of the tool-gateway and projector pods, run
// through `migrate-<service>.ts`. The services also migrate at start-up (under an advisory lock, so replicas
// starting together apply them once); running it first makes a failed migration show as a failed init container,
// before any replica takes work.
import type { z } from 'zod';
import { openDatabase, redact, type DbHandle } from '@dura/db';
import { CONFIG_EXIT_CODE, ConfigError, loadConfig } from '@dura/service-kit';

export interface MigrationTarget {
  /** The service, as it names itself in messages. */
  service: string;
  /** The service's configuration schema: DATABASE_URL is read and checked as the service itself does. */
  schema: z.ZodObject<{ DATABASE_URL: z.ZodType<string> }>;
  migrate(handle: DbHandle): Promise<void>;
}

/** Applies the target's migrations to DATABASE_URL; resolves with the exit code (0, 1, or 2 for bad configuration). */
export async function runMigrations(target: MigrationTarget): Promise<number> {
  const { service } = target;
  let url: string | undefined;
  try {
    url = loadConfig(`${service} migrate`, target.schema.pick({ DATABASE_URL: true })).DATABASE_URL;
    const database = await openDatabase({ url, maxConnections: 1 });
    try {
      await target.migrate(database);
    } finally {
      await database.close();
    }
    process.stdout.write(`${service}: migrations applied to ${redact(url)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return CONFIG_EXIT_CODE;
    }
    const where = url === undefined ? '' : ` to ${redact(url)}`;
    process.stderr.write(`${service}: migrations could not be applied${where}: ${(err as Error).message}\n`);
    return 1;
  }
}
