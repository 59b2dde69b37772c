export { createToolGateway, DEFAULT_GATEWAY_ATTEMPTS, GATEWAY_CONSUMER } from './gateway';
export type { ToolGateway, GatewayDeps } from './gateway';
export { createRelay, OBSERVATIONS_PUBLISHED } from './relay';
export type { PublishCounts, Relay } from './relay';
export { FAST_PATH_LEASE_MS } from './effect-ledger';
export { migrateGateway, GATEWAY_MIGRATIONS } from './migrations';
export { effects, outbox, timers } from './db/schema';
export type { EffectRow, TimerRow } from './db/schema';
export { createTimers, TIMER_CONSUMER, TIMERS_CHANNEL, TIMERS_PENDING } from './timers';
export type { Timers, TimersOptions } from './timers';
export type { FiredTimer } from './timer-store';
export {
  createCancellations,
  openCancellationBucket,
  CancellationSchema,
  RunCancelled,
} from './cancellations';
export type { Cancellation, Cancellations } from './cancellations';
export { GatewayConfigSchema, loadGatewayConfig } from './config';
export type { GatewayConfig } from './config';
export type { LocalCallOutcome } from './in-place-calls';
export { buildGateway } from './service';
export type { GatewayServiceParts } from './service';
export { toolCatalogue } from './tool-catalogue';
