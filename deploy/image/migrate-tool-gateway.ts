// The tool gateway pod's init container: node --import tsx deploy/image/migrate-tool-gateway.ts (reads DATABASE_URL).
import { GatewayConfigSchema, migrateGateway } from '@dura/tool-gateway';
import { runMigrations } from './run-migrations';

process.exitCode = await runMigrations({
  service: 'tool-gateway',
  schema: GatewayConfigSchema,
  migrate: migrateGateway,
});
