import { openDatabase } from '@dura/db';
import {
  connectNats,
  loadNatsSecurity,
  createLogger,
  metricsRoute,
  runMain,
  startHttpServer,
  startServiceTelemetry,
} from '@dura/service-kit';
import { projectorRoutes } from './api';
import { apiSecurityFromConfig } from './auth/from-config';
import { loadProjectorConfig } from './config';
import { migrateProjector } from './migrations';
import { createProjector } from './projector';

runMain('projector', async () => {
  const config = loadProjectorConfig();
  const natsSecurity = loadNatsSecurity('projector', config);
  const log = createLogger({ service: 'projector', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  // First, so every instrument the projector declares is registered with it; /metrics is on the API port.
  const telemetry = await startServiceTelemetry({ service: 'projector', log });
  // Before anything connects: a bad tokens file or CORS origin stops the start with its reason.
  const security = await apiSecurityFromConfig(config, log);
  const database = await openDatabase({ url: config.DATABASE_URL });
  await migrateProjector(database);
  const nats = await connectNats(config.NATS_URL, 'dura-projector', log, natsSecurity);
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
    host: config.DURA_BIND_HOST,
    routes: [
      ...projectorRoutes({
        ...nats,
        db: database.db,
        position: projector.position,
        log,
        ...security,
        streamLimits: { perToken: config.PROJECTOR_SSE_MAX_PER_TOKEN, total: config.PROJECTOR_SSE_MAX_TOTAL },
      }),
      metricsRoute(telemetry.telemetry),
    ],
    log,
  });
  log.info('projector api listening', { url: http.url, address: http.address });
  return {
    graceMs: config.SHUTDOWN_GRACE_MS,
    async stop() {
      await http.close();
      await projector.stop();
      await nats.nc.drain();
      await database.close();
      await telemetry.stop();
    },
  };
});
