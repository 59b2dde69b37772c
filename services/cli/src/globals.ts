import type { FlagSpec } from './command';

export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** Flags every command accepts, before or after the command name. */
export const GLOBAL_FLAGS: Record<string, FlagSpec> = {
  nats: {
    type: 'string',
    value: 'URL',
    description: `NATS server (default $NATS_URL, else the running dev stack's, else ${DEFAULT_NATS_URL})`,
  },
  api: {
    type: 'string',
    value: 'URL',
    description: `the projector's read API (default $DURA_API_URL, else the running dev stack's, else ${DEFAULT_API_URL})`,
  },
  'api-token': {
    type: 'string',
    value: 'TOKEN',
    description:
      'bearer token for the read API; visible in ps and shell history, so prefer $DURA_API_TOKEN or --api-token-file',
  },
  'api-token-file': {
    type: 'string',
    value: 'FILE',
    description:
      'file holding the bearer token for the read API (default $DURA_API_TOKEN_FILE, then $DURA_API_TOKEN)',
  },
  'nats-user': {
    type: 'string',
    value: 'USER',
    description: 'NATS user (default $NATS_USER; password from $NATS_PASSWORD)',
  },
  'nats-creds': {
    type: 'string',
    value: 'FILE',
    description: 'NATS credentials file, .creds (default $NATS_CREDS_FILE)',
  },
  'nats-nkey': {
    type: 'string',
    value: 'FILE',
    description: 'file with the nkey seed (default $NATS_NKEY_SEED_FILE)',
  },
  'tls-ca': {
    type: 'string',
    value: 'FILE',
    description: "CA that signed the NATS server's certificate (default $NATS_TLS_CA_FILE)",
  },
  'tls-cert': {
    type: 'string',
    value: 'FILE',
    description: 'client certificate for NATS (default $NATS_TLS_CERT_FILE)',
  },
  'tls-key': { type: 'string', value: 'FILE', description: 'key of --tls-cert (default $NATS_TLS_KEY_FILE)' },
  json: { type: 'boolean', description: 'machine output: one JSON document, or JSON lines for streams' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

/** The NATS security flags and the environment variables they stand for; a flag wins over its variable. */
export const NATS_SECURITY_FLAGS = {
  'nats-user': 'NATS_USER',
  'nats-creds': 'NATS_CREDS_FILE',
  'nats-nkey': 'NATS_NKEY_SEED_FILE',
  'tls-ca': 'NATS_TLS_CA_FILE',
  'tls-cert': 'NATS_TLS_CERT_FILE',
  'tls-key': 'NATS_TLS_KEY_FILE',
} as const;
