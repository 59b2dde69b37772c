export {
  loadWorkerConfig,
  WORKER_DEFAULT_CONCURRENCY,
  type WorkerConfig,
  WorkerConfigSchema,
  type WorkerSettings,
} from './config';
export { buildWorker, type Worker, type WorkerParts } from './service';
