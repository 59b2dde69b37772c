export { loadWorkerConfig, WorkerConfigSchema, WORKER_DEFAULT_CONCURRENCY } from './config';
export type { WorkerConfig, WorkerSettings } from './config';
export { buildWorker } from './service';
export type { Worker, WorkerParts } from './service';
