// The Secrets an operator creates before applying the prod overlay (docs/security/deploy.md), with stand-in values.
import type { ExternalSecrets } from './pods';

export const PROD_SECRETS: ExternalSecrets = {
  'dura-secrets': { DATABASE_URL: 'postgres://dura@db.example:5432/dura' },
  'dura-nats-planner': { NATS_USER: 'planner', NATS_PASSWORD: 'stand-in-1' },
  'dura-nats-tool-gateway': { NATS_USER: 'gateway', NATS_PASSWORD: 'stand-in-2' },
  'dura-nats-projector': { NATS_USER: 'projector', NATS_PASSWORD: 'stand-in-3' },
  'dura-nats-worker': { NATS_USER: 'worker', NATS_PASSWORD: 'stand-in-4' },
  'dura-nats-tls': { 'ca.crt': '-----BEGIN CERTIFICATE-----' },
  'dura-api-tokens': { 'tokens.json': '[]' },
};
