import { connectNats, createLogger, runMain, startServiceTelemetry } from '@dura/service-kit';
import { loadToolRegistry, toolModulesFrom } from '@dura/tools';
import { loadPlannerConfig } from './config';
import { createPlanner } from './planner';
import { createScriptedModel, fileCallLog } from './scripted-model';

runMain('planner', async () => {
  const config = loadPlannerConfig();
  const log = createLogger({ service: 'planner', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  // First, so every instrument the planner declares is registered with it.
  const telemetry = await startServiceTelemetry({
    service: 'planner',
    log,
    metricsPort: config.METRICS_PORT,
  });
  const nats = await connectNats(config.NATS_URL, 'dura-planner', log);
  const planner = createPlanner({
    ...nats,
    model: createScriptedModel(
      config.DURA_SCRIPTED_MODEL_LOG ? { callLog: fileCallLog(config.DURA_SCRIPTED_MODEL_LOG) } : {},
    ),
    tools: await loadToolRegistry(toolModulesFrom(config.DURA_TOOLS_MODULES)),
    log,
    concurrency: config.PLANNER_CONCURRENCY,
    ackWaitMs: config.PLANNER_ACK_WAIT_MS,
    snapshotEvery: config.PLANNER_SNAPSHOT_EVERY,
    streams: {
      replicas: config.DURA_STREAM_REPLICAS,
      duplicateWindowMs: config.DURA_DUPLICATE_WINDOW_MS,
      storage: 'file',
    },
  });
  await planner.start();
  return {
    async stop() {
      await planner.stop();
      await nats.nc.drain();
      await telemetry.stop();
    },
  };
});
