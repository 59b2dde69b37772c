import { randomBytes } from 'node:crypto';
import { createContainerDatabase } from './container-database';
import { infraMode } from './infra-mode';
import { createLocalDatabase } from './local-database';
import type { TestDatabaseHandle } from './test-database-handle';

export type { TestDatabaseHandle } from './test-database-handle';

export interface CreateTestDatabaseOptions {
  /** Goes into the name (dura_t_<prefix>_<random>) so a leaked database says where it came from. */
  prefix?: string;
}

function databaseName(prefix: string): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .slice(0, 40);
  return `dura_t_${clean}_${randomBytes(5).toString('hex')}`;
}

/** Creates an empty database with a unique name, so spec files can run in parallel without sharing state. */
export async function createTestDatabase(opts: CreateTestDatabaseOptions = {}): Promise<TestDatabaseHandle> {
  const name = databaseName(opts.prefix ?? 'db');
  return (await infraMode()) === 'containers' ? createContainerDatabase(name) : createLocalDatabase(name);
}
