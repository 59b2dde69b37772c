import { AsyncLocalStorage } from 'node:async_hooks';
import { currentTraceIds } from '@dura/telemetry';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

/** One structured logger for every service: JSON lines by default, a readable line in `pretty` mode. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const scoped = new AsyncLocalStorage<LogFields>();

/**
 * Runs `fn` with `fields` (e.g. `{ runId }`) added to every line logged inside it, however deep: so the
 * lines of one run's work carry its id without every function passing it on.
 */
export function withLogFields<T>(fields: LogFields, fn: () => T): T {
  return scoped.run({ ...scoped.getStore(), ...fields }, fn);
}

export function createLogger(options: {
  service: string;
  level?: LogLevel;
  format?: 'json' | 'pretty';
  write?: (line: string) => void;
  fields?: LogFields;
}): Logger {
  const min = RANK[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const base = { service: options.service, ...options.fields };

  const emit = (level: LogLevel, message: string, fields: LogFields = {}): void => {
    if (RANK[level] < min) return;
    // The active span's ids tie the line to its trace (Jaeger: search by trace id).
    const ids = currentTraceIds();
    const record = {
      ts: new Date().toISOString(),
      level,
      ...base,
      ...scoped.getStore(),
      ...(ids ? { traceId: ids.traceId, spanId: ids.spanId } : {}),
      msg: message,
      ...serializeErrors(fields),
    };
    write(options.format === 'pretty' ? pretty(record) : JSON.stringify(record));
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...options, fields: { ...options.fields, ...fields } }),
  };
}

function serializeErrors(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      value instanceof Error
        ? { name: value.name, message: value.message, ...('code' in value ? { code: value.code } : {}) }
        : value;
  }
  return out;
}

function pretty(record: Record<string, unknown>): string {
  // A short trace id is enough to tell runs apart on a terminal; the span id is noise there.
  const { ts, level, service, msg, traceId, spanId: _spanId, ...rest } = record;
  if (typeof traceId === 'string') rest['trace'] = traceId.slice(0, 8);
  const extras = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${String(ts).slice(11, 23)} ${String(level).toUpperCase().padEnd(5)} [${String(service)}] ${String(msg)}${extras ? `  ${extras}` : ''}`;
}
