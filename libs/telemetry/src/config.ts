/**
 * Reads the standard OTEL_* environment variables into one plain value, so the rules (export is off unless
 * an endpoint or an exporter is named; which URL each protocol uses) are decided in one pure, testable place
 * and the SDK is then built from explicit settings instead of each component reading `process.env` itself.
 */
import { DuraError } from '@dura/contracts';

export type Env = Record<string, string | undefined>;

export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';
const PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json', 'grpc'];

export type TraceExport =
  | {
      kind: 'otlp';
      protocol: OtlpProtocol;
      /** Full URL: `<endpoint>/v1/traces` for HTTP, the endpoint itself for gRPC. */
      url: string;
      headers: Record<string, string>;
      timeoutMillis: number;
    }
  | { kind: 'console' };

export interface BatchSettings {
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
}

export interface TelemetryConfig {
  /** OTEL_SDK_DISABLED=true: no tracer provider at all (spans are no-ops, carry no ids). */
  disabled: boolean;
  serviceName: string;
  /** From OTEL_RESOURCE_ATTRIBUTES, plus service.name / service.version. */
  resourceAttributes: Record<string, string>;
  /** Where spans go; empty means export is off, and then no tracer provider runs at all. */
  exports: TraceExport[];
  batch: BatchSettings;
}

/** A malformed OTEL_* variable: the process should not start with telemetry silently half-configured. */
export class TelemetryConfigError extends DuraError {
  constructor(message: string) {
    super('telemetry_config_error', message);
  }
}

const DEFAULT_ENDPOINT: Record<OtlpProtocol, string> = {
  'http/protobuf': 'http://localhost:4318',
  'http/json': 'http://localhost:4318',
  grpc: 'http://localhost:4317',
};

/** The telemetry settings `env` asks for; throws TelemetryConfigError naming the variable when one is malformed. */
export function readTelemetryConfig(options: {
  service: string;
  version?: string;
  env: Env;
}): TelemetryConfig {
  const get = (name: string): string | undefined => {
    const value = options.env[name]?.trim();
    return value ? value : undefined;
  };
  const fromEnv = parseKeyValueList('OTEL_RESOURCE_ATTRIBUTES', get('OTEL_RESOURCE_ATTRIBUTES'));
  // Precedence as the spec gives it: OTEL_SERVICE_NAME, then service.name in OTEL_RESOURCE_ATTRIBUTES.
  const serviceName = get('OTEL_SERVICE_NAME') ?? fromEnv['service.name'] ?? options.service;
  const resourceAttributes: Record<string, string> = { ...fromEnv, 'service.name': serviceName };
  if (options.version !== undefined) resourceAttributes['service.version'] ??= options.version;

  return {
    disabled: get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true',
    serviceName,
    resourceAttributes,
    exports: traceExports(get),
    batch: {
      scheduledDelayMillis: nonNegative(get, 'OTEL_BSP_SCHEDULE_DELAY', 5_000),
      exportTimeoutMillis: nonNegative(get, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000),
      maxQueueSize: nonNegative(get, 'OTEL_BSP_MAX_QUEUE_SIZE', 2_048),
      maxExportBatchSize: nonNegative(get, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
    },
  };
}

function traceExports(get: (name: string) => string | undefined): TraceExport[] {
  const endpoint = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? get('OTEL_EXPORTER_OTLP_ENDPOINT');
  const named = get('OTEL_TRACES_EXPORTER')
    ?.split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  // Unlike the SDK's own default (otlp to localhost), export stays off until someone asks for it.
  const exporters = named ?? (endpoint ? ['otlp'] : []);
  if (exporters.includes('none')) return [];
  return [...new Set(exporters)].map((name): TraceExport => {
    if (name === 'console') return { kind: 'console' };
    if (name !== 'otlp')
      throw new TelemetryConfigError(
        `OTEL_TRACES_EXPORTER: unsupported exporter "${name}" (supported: otlp, console, none)`,
      );
    const protocol = otlpProtocol(get);
    return {
      kind: 'otlp',
      protocol,
      url: tracesUrl(get, protocol),
      headers: {
        ...parseKeyValueList('OTEL_EXPORTER_OTLP_HEADERS', get('OTEL_EXPORTER_OTLP_HEADERS')),
        ...parseKeyValueList('OTEL_EXPORTER_OTLP_TRACES_HEADERS', get('OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
      },
      timeoutMillis:
        get('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') !== undefined
          ? nonNegative(get, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 10_000)
          : nonNegative(get, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000),
    };
  });
}

function otlpProtocol(get: (name: string) => string | undefined): OtlpProtocol {
  const name = get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL')
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = get(name) ?? 'http/protobuf';
  if ((PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
  throw new TelemetryConfigError(
    `${name}: unsupported protocol "${value}" (supported: ${PROTOCOLS.join(', ')})`,
  );
}

function tracesUrl(get: (name: string) => string | undefined, protocol: OtlpProtocol): string {
  // The signal-specific endpoint is used as given; the generic one gets the signal path appended (HTTP only).
  const specific = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const url = specific ?? get('OTEL_EXPORTER_OTLP_ENDPOINT') ?? DEFAULT_ENDPOINT[protocol];
  const name = specific ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  if (!/^https?:\/\/[^/]+/i.test(url))
    throw new TelemetryConfigError(
      `${name}: expected an http(s) URL such as http://localhost:4318, got "${url}"`,
    );
  if (specific || protocol === 'grpc') return url;
  return `${url.replace(/\/+$/, '')}/v1/traces`;
}

/** `k1=v1,k2=v2` with percent-encoded values, as OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS use. */
function parseKeyValueList(name: string, raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const entry of raw.split(',')) {
    if (!entry.trim()) continue;
    const at = entry.indexOf('=');
    const key = at > 0 ? entry.slice(0, at).trim() : '';
    if (!key) throw new TelemetryConfigError(`${name}: expected key=value pairs, got "${entry.trim()}"`);
    try {
      out[decodeURIComponent(key)] = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      throw new TelemetryConfigError(`${name}: bad percent-encoding in "${entry.trim()}"`);
    }
  }
  return out;
}

function nonNegative(get: (name: string) => string | undefined, name: string, fallback: number): number {
  const raw = get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new TelemetryConfigError(`${name}: expected a non-negative integer, got "${raw}"`);
  return value;
}
