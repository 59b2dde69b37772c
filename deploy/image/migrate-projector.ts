// The projector pod's init container: node --import tsx deploy/image/migrate-projector.ts (reads DATABASE_URL).
import { migrateProjector, ProjectorConfigSchema } from '@dura/projector';
import { runMigrations } from './run-migrations';

process.exitCode = await runMigrations({
  service: 'projector',
  schema: ProjectorConfigSchema,
  migrate: migrateProjector,
});
