export { createProjector } from './projector';
export type { Projector, ProjectorDeps } from './projector';
export { applyBatch, readCheckpoint, RUNS_CHECKPOINT } from './projection';
export type { StreamMessage } from './projection';
export { projectorRoutes } from './api';
export { migrateProjector, PROJECTOR_MIGRATIONS } from './migrations';
export { runs, runEvents, checkpoints, projectionErrors } from './db/schema';
export { ProjectorConfigSchema, loadProjectorConfig } from './config';
export type { ProjectorConfig } from './config';
