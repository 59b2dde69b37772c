import { openDatabase } from '@dura/db';
import { connectNats, createLogger, runMain, startHttpServer } from '@dura/service-kit';
import { projectorRoutes } from './api';
import { loadProjectorConfig } from './config';
import { migrateProjector } from './migrations';
import { createProjector } from './projector';

runMain('projector', async () => {
  const config = loadProjectorConfig();
  const log = createLogger({ service: 'projector', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const database = await openDatabase({ url: config.DATABASE_URL });
  await migrateProjector(database);
  const nats = await connectNats(config.NATS_URL, 'dura-projector', log);
  const projector = createProjector({
    ...nats,
    db: database.db,
    log,
    batchSize: config.PROJECTOR_BATCH_SIZE,
    streams: {
      replicas: config.DURA_STREAM_REPLICAS,
      duplicateWindowMs: config.DURA_DUPLICATE_WINDOW_MS,
      storage: 'file',
    },
  });
  await projector.start();
  const http = await startHttpServer({
    port: config.PROJECTOR_HTTP_PORT,
    routes: projectorRoutes(database.db, projector.position),
    log,
  });
  log.info('projector api listening', { url: http.url });
  return {
    async stop() {
      await http.close();
      await projector.stop();
      await nats.nc.drain();
      await database.close();
    },
  };
});
