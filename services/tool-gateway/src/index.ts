export {
  createToolGateway,
  DEFAULT_GATEWAY_ATTEMPTS,
  GATEWAY_CONSUMER,
  type GatewayDeps,
  type ToolGateway,
} from './gateway';
export { createRelay, OBSERVATIONS_PUBLISHED, type PublishCounts, type Relay } from './relay';
export { FAST_PATH_LEASE_MS } from './effect-ledger';
export { GATEWAY_MIGRATIONS, migrateGateway } from './migrations';
export { type EffectRow, effects, outbox, type TimerRow, timers } from './db/schema';
export {
  createTimers,
  TIMER_CONSUMER,
  type Timers,
  TIMERS_CHANNEL,
  TIMERS_PENDING,
  type TimersOptions,
} from './timers';
export type { FiredTimer } from './timer-store';
export {
  type Cancellation,
  type Cancellations,
  CancellationSchema,
  createCancellations,
  openCancellationBucket,
  RunCancelled,
} from './cancellations';
export { type GatewayConfig, GatewayConfigSchema, loadGatewayConfig } from './config';
export type { LocalCallOutcome } from './in-place-calls';
export { buildGateway, type GatewayServiceParts } from './service';
export { toolCatalogue } from './tool-catalogue';
