import type { FlagSpec } from './command';

export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** Flags every command accepts, before or after the command name. */
export const GLOBAL_FLAGS: Record<string, FlagSpec> = {
  nats: {
    type: 'string',
    value: 'URL',
    description: `NATS server (default $NATS_URL or ${DEFAULT_NATS_URL})`,
  },
  api: {
    type: 'string',
    value: 'URL',
    description: `the projector's read API (default $DURA_API_URL or ${DEFAULT_API_URL})`,
  },
  json: { type: 'boolean', description: 'machine output: one JSON document, or JSON lines for streams' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};
