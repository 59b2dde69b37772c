import { loadContainerModule } from './load-container-module';
import type { TestDatabaseHandle } from './test-database-handle';

const IMAGE = 'postgres:16-alpine';

// One container per database: slower than sharing a server, but nothing to clean up beyond stopping it.
export async function createContainerDatabase(name: string): Promise<TestDatabaseHandle> {
  const { PostgreSqlContainer } = await loadContainerModule(
    '@testcontainers/postgresql',
    () => import('@testcontainers/postgresql'),
  );
  const container = await new PostgreSqlContainer(IMAGE).withDatabase(name).start();
  let stopped: Promise<void> | undefined;
  const drop = () => {
    stopped ??= container.stop().then(() => undefined);
    return stopped;
  };
  return { url: container.getConnectionUri(), name, drop, [Symbol.asyncDispose]: drop };
}
