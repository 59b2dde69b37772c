import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger as PinoLogger } from 'pino';
import { currentTraceIds } from '@dura/telemetry';
import { redactForLog, scrubText } from './log-redaction';

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

const scoped = new AsyncLocalStorage<LogFields>();

/**
 * Runs `fn` with `fields` (e.g. `{ runId }`) added to every line logged inside it, however deep: so the
 * lines of one run's work carry its id without every function passing it on.
 */
export function withLogFields<T>(fields: LogFields, fn: () => T): T {
  return scoped.run({ ...scoped.getStore(), ...fields }, fn);
}

/**
 * A pino logger behind the Logger interface. Every field, child binding, scoped field and message passes
 * through `redactForLog`/`scrubText` first, so a secret-named field or a password inside a connection string
 * never reaches a line however it was logged.
 */
export function createLogger(options: {
  service: string;
  level?: LogLevel;
  format?: 'json' | 'pretty';
  write?: (line: string) => void;
  fields?: LogFields;
}): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const pretty = options.format === 'pretty';
  // pino writes one JSON line per record to this stream, in the calling thread: no transport worker.
  const destination = {
    write: (chunk: string) => {
      const line = chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk;
      write(pretty ? prettyLine(JSON.parse(line) as Record<string, unknown>) : line);
    },
  };
  const root = pino(
    {
      level: options.level ?? 'info',
      base: redactForLog({ service: options.service, ...options.fields }) as LogFields,
      messageKey: 'msg',
      // Errors are already reduced to name, message and code by redactForLog (no stack in a log line).
      serializers: { err: (value: unknown) => value },
      timestamp: () => `,"ts":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        // The active span's ids tie the line to its trace (Jaeger: search by trace id).
        const ids = currentTraceIds();
        const store = scoped.getStore();
        return {
          ...(store ? (redactForLog(store) as LogFields) : {}),
          ...(ids ? { traceId: ids.traceId, spanId: ids.spanId } : {}),
        };
      },
    },
    destination,
  );
  return wrap(root);
}

function wrap(inner: PinoLogger): Logger {
  const emit =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      if (!inner.isLevelEnabled(level)) return;
      // The message ahead of the fields, as lines always had it (tests and log queries match `"msg":"…","url"`).
      inner[level]({ msg: scrubText(message), ...(fields ? (redactForLog(fields) as LogFields) : {}) });
    };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (fields) => wrap(inner.child(redactForLog(fields) as LogFields)),
  };
}

function prettyLine(record: Record<string, unknown>): string {
  // A short trace id is enough to tell runs apart on a terminal; the span id is noise there.
  const { ts, level, service, msg, traceId, spanId: _spanId, ...rest } = record;
  if (typeof traceId === 'string') rest['trace'] = traceId.slice(0, 8);
  const extras = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${String(ts).slice(11, 23)} ${String(level).toUpperCase().padEnd(5)} [${String(service)}] ${String(msg)}${extras ? `  ${extras}` : ''}`;
}
