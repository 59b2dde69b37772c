import { openDatabase } from '@dura/db';
import {
  connectNats,
  loadNatsSecurity,
  createLogger,
  metricsRoute,
  readinessRoute,
  runMain,
  startHttpServer,
  startServiceTelemetry,
  waitUntilReachable,
} from '@dura/service-kit';
import { projectorRoutes } from './api';
import { apiSecurityFromConfig } from './auth/from-config';
import { loadProjectorConfig } from './config';
import { migrateProjector } from './migrations';
import { createProjector } from './projector';
import { startingRoutes } from './starting-routes';

runMain('projector', async () => {
  const config = loadProjectorConfig();
  const natsSecurity = loadNatsSecurity('projector', config);
  const log = createLogger({ service: 'projector', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  // First, so every instrument the projector declares is registered with it; /metrics is on the API port.
  const telemetry = await startServiceTelemetry({ service: 'projector', log });
  // Before anything connects: a bad tokens file or CORS origin stops the start with its reason.
  const security = await apiSecurityFromConfig(config, log);
  // Listens at once, not ready, while it waits for Postgres and NATS (bad credentials still stop the start).
  let waitingFor = 'starting';
  const http = await startHttpServer({
    port: config.PROJECTOR_HTTP_PORT,
    host: config.DURA_BIND_HOST,
    routes: startingRoutes(() => waitingFor),
    log,
    trustedOrigins: security.cors.origins,
  });
  const waitForServer = {
    log,
    onWaiting: (reason: string | undefined) => {
      waitingFor = reason ?? 'starting';
    },
  };
  const database = await waitUntilReachable(
    'Postgres',
    () => openDatabase({ url: config.DATABASE_URL }),
    waitForServer,
  );
  await migrateProjector(database);
  const nats = await connectNats(config.NATS_URL, 'dura-projector', log, natsSecurity, { waitForServer });
  const projector = createProjector({
    ...nats,
    db: database.db,
    log,
    batchSize: config.PROJECTOR_BATCH_SIZE,
    lingerMs: config.PROJECTOR_LINGER_MS,
    streams: {
      replicas: config.DURA_STREAM_REPLICAS,
      duplicateWindowMs: config.DURA_DUPLICATE_WINDOW_MS,
      storage: 'file',
    },
    startWait: waitForServer,
  });
  await projector.start();
  http.setRoutes([
    ...projectorRoutes({
      ...nats,
      db: database.db,
      position: projector.position,
      log,
      ...security,
      console: {
        ...(config.PROJECTOR_CONSOLE_DIR === undefined ? {} : { dir: config.PROJECTOR_CONSOLE_DIR }),
        ...(config.PROJECTOR_CONSOLE_TRACES_URL === undefined
          ? {}
          : { tracesUrl: config.PROJECTOR_CONSOLE_TRACES_URL }),
      },
      streamLimits: { perToken: config.PROJECTOR_SSE_MAX_PER_TOKEN, total: config.PROJECTOR_SSE_MAX_TOTAL },
      chatDoubleTexting: config.PROJECTOR_CHAT_DOUBLE_TEXTING,
    }),
    metricsRoute(telemetry.telemetry),
    // Ready: started and still connected to NATS.
    readinessRoute(() => Promise.resolve(nats.nc.isClosed() ? 'the NATS connection is closed' : undefined)),
  ]);
  log.info('projector api listening', { url: http.url, address: http.address, console: `${http.url}/ui/` });
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
