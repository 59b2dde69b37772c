import { metricsRoute, readinessRoute, runService, startHttpServer } from '@dura/service-kit';
import { projectorRoutes } from './api';
import { apiSecurityFromConfig } from './auth/from-config';
import { loadProjectorConfig } from './config';
import { migrateProjector } from './migrations';
import { createProjector } from './projector';
import { startingRoutes } from './starting-routes';

runService({
  name: 'projector',
  config: () => loadProjectorConfig(),
  needs: ['postgres', 'nats'],
  migrate: (database) => migrateProjector(database),
  async prepare({ config, log }) {
    // Before anything connects: a bad tokens file or CORS origin stops the start with its reason.
    const security = await apiSecurityFromConfig(config, log);
    // Listens at once, not ready, while it waits for Postgres and NATS (bad credentials still stop the start).
    const starting = { waitingFor: 'starting' };
    const http = await startHttpServer({
      port: config.PROJECTOR_HTTP_PORT,
      host: config.DURA_BIND_HOST,
      routes: startingRoutes(() => starting.waitingFor),
      log,
      trustedOrigins: security.cors.origins,
    });
    return { security, http, starting };
  },
  onWaiting: ({ starting }, reason) => {
    starting.waitingFor = reason ?? 'starting';
  },
  async build({ config, log, nats, database, startWait, telemetry, prepared }) {
    const { security, http } = prepared;
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
      startWait,
    });
    await projector.start();
    // /metrics is on the API port.
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
      // Ready: started and still connected to NATS (a Postgres outage is waited out by the projection itself).
      readinessRoute(() => Promise.resolve(nats.nc.isClosed() ? 'the NATS connection is closed' : undefined)),
    ]);
    log.info('projector api listening', { url: http.url, address: http.address, console: `${http.url}/ui/` });
    return {
      async stop() {
        await http.close();
        await projector.stop();
      },
    };
  },
});
