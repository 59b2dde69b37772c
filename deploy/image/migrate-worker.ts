// The worker pod's init container: node --import tsx deploy/image/migrate-worker.ts (reads DATABASE_URL). The
// worker keeps the gateway's tables (effects, outbox, timers), so it applies the gateway's migrations.
import { migrateGateway } from '@dura/tool-gateway';
import { WorkerConfigSchema } from '@dura/worker';
import { runMigrations } from './run-migrations';

process.exitCode = await runMigrations({
  service: 'worker',
  schema: WorkerConfigSchema,
  migrate: migrateGateway,
});
