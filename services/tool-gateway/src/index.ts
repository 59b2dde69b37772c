export { createToolGateway, GATEWAY_CONSUMER } from './gateway';
export type { ToolGateway, GatewayDeps } from './gateway';
export { createRelay } from './relay';
export type { Relay } from './relay';
export { migrateGateway, GATEWAY_MIGRATIONS } from './migrations';
export { effects, outbox } from './db/schema';
export type { EffectRow } from './db/schema';
export { GatewayConfigSchema, loadGatewayConfig } from './config';
export type { GatewayConfig } from './config';
