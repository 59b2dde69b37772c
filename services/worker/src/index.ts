export {
  loadEmbeddedWorkerConfig,
  loadWorkerConfig,
  WorkerConfigSchema,
  WORKER_DEFAULT_CONCURRENCY,
} from './config';
export type { WorkerConfig, WorkerSettings, WorkerViews } from './config';
export { buildWorker } from './service';
export type { Worker, WorkerParts } from './service';
