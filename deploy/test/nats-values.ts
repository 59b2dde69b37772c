// What the NATS Helm chart (nats 1.x) makes of deploy/nats/values*.yaml, for the parts those files set: the
// `config.merge` block (with `$include` and `<< raw >>` values, as the chart writes them) and client TLS.
import { readYaml } from './repo';

interface SecretKeyRef {
  valueFrom?: { secretKeyRef?: { name?: string; key?: string; optional?: boolean } };
}

export interface NatsValues {
  config: {
    cluster: { enabled: boolean; replicas?: number };
    nats?: { tls?: { enabled?: boolean; secretName?: string; dir?: string; cert?: string; key?: string } };
    merge?: Record<string, unknown>;
  };
  container?: { env?: Record<string, string | SecretKeyRef> };
}

export const natsValues = (file: 'values.yaml' | 'values-dev.yaml'): NatsValues =>
  readYaml('deploy/nats', file) as NatsValues;

/** The file name `$include` names: the chart mounts its ConfigMap's keys next to nats.conf. */
export const PERMISSIONS_FILE = 'dura-permissions.conf';

const RAW = /^<< (.+) >>$/;

function confValue(value: unknown, indent: string): string {
  if (typeof value === 'string') return RAW.exec(value)?.[1] ?? JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value))
    return `[\n${value.map((v) => `${indent}  ${confValue(v, `${indent}  `)}`).join('\n')}\n${indent}]`;
  if (typeof value === 'object' && value !== null) return `{\n${confBlock(value, `${indent}  `)}\n${indent}}`;
  throw new Error(`cannot write ${String(value)} as NATS configuration`);
}

function confBlock(object: object, indent: string): string {
  return Object.entries(object)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) =>
      key.endsWith('$include')
        ? `${indent}include ./${String(value)}`
        : `${indent}${key}: ${confValue(value, indent)}`,
    )
    .join('\n');
}

/**
 * The server configuration `values` yields, with its TLS files in `tlsDir` (the chart mounts the Secret there):
 * keys in the chart's order (sorted, so `$include` comes before what uses its variables).
 */
export function natsConf(values: NatsValues, tlsDir: string): string {
  const tls = values.config.nats?.tls;
  const lines = [confBlock(values.config.merge ?? {}, '')];
  if (tls?.enabled)
    lines.push(
      `tls {\n  cert_file: "${tlsDir}/${tls.cert ?? 'tls.crt'}"\n  key_file: "${tlsDir}/${tls.key ?? 'tls.key'}"\n}`,
    );
  return `${lines.join('\n')}\n`;
}
