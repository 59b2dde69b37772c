export { createProjector, type Projector, type ProjectorDeps } from './projector';
export {
  applyBatch,
  heldStates,
  readCheckpoint,
  RUNS_CHECKPOINT,
  type HeldStates,
  type StreamMessage,
} from './projection';
export { projectorRoutes, type ReadApiDeps } from './api';
export { agentLabel, type RunColumns, summarize } from './run-summary';
export { OPENAPI_FILE, openApiDocument } from './openapi';
export { migrateProjector, PROJECTOR_MIGRATIONS } from './migrations';
export { checkpoints, projectionErrors, runEvents, runItems, runs } from './db/schema';
export { readStoredState, readStoredStates, RUN_STATE_LISTS, type RunStateList } from './stored-state';
export { loadProjectorConfig, type ProjectorConfig, ProjectorConfigSchema } from './config';
export { type Authenticator, createAuthenticator } from './auth/authenticator';
export { parseTokenFile, sha256Hex, TokenFileSchema } from './auth/api-tokens';
export { createJwtVerifier, type OidcOptions } from './auth/jwt-verifier';
export { corsHeaders, corsPolicy, type CorsPolicy, preflightHeaders } from './auth/cors';
export {
  ALL_TENANTS,
  AuthError,
  type Caller,
  OPEN_CALLER,
  requireScope,
  type Scope,
  SCOPES,
} from './auth/caller';
export { apiSecurityFromConfig } from './auth/from-config';
export { DEFAULT_STREAM_LIMITS, type StreamLimits } from './stream-slots';
export { flowLimitRoutes, readFlowState } from './flow-limits-route';
