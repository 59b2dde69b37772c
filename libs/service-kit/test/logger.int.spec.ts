import { describe, expect, it } from 'vitest';
import { ContractViolation } from '@dura/contracts';
import { startTelemetry, withSpan } from '@dura/telemetry';
import { startOtlpReceiver } from '@dura/testing';
import { createLogger, duraTracer, withLogFields, type LogLevel } from '../src/index';

function capture(
  options: { level?: LogLevel; format?: 'json' | 'pretty'; fields?: Record<string, unknown> } = {},
) {
  const lines: string[] = [];
  const log = createLogger({ service: 'planner', write: (line) => lines.push(line), ...options });
  return { log, lines, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes one JSON object per line with time, level, service, message and fields', () => {
    const { log, lines, records } = capture();
    log.info('run started', { runId: 'run-1', step: 3 });

    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    const [record] = records();
    expect(record).toEqual({
      ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      level: 'info',
      service: 'planner',
      msg: 'run started',
      runId: 'run-1',
      step: 3,
    });
  });

  it('drops records below the configured level (default info)', () => {
    const byDefault = capture();
    byDefault.log.debug('noise');
    byDefault.log.info('kept');
    expect(byDefault.records().map((r) => r.msg)).toEqual(['kept']);

    const quiet = capture({ level: 'warn' });
    quiet.log.debug('a');
    quiet.log.info('b');
    quiet.log.warn('c');
    quiet.log.error('d');
    expect(quiet.records().map((r) => [r.level, r.msg])).toEqual([
      ['warn', 'c'],
      ['error', 'd'],
    ]);

    const verbose = capture({ level: 'debug' });
    verbose.log.debug('shown');
    expect(verbose.records()).toHaveLength(1);
  });

  it('serializes errors to name, message and code instead of {}', () => {
    const { log, records } = capture();
    log.error('handler failed', {
      err: new TypeError('x is undefined'),
      violation: new ContractViolation('bad task', ['tool: required']),
    });

    expect(records()[0]).toMatchObject({
      err: { name: 'TypeError', message: 'x is undefined' },
      violation: { name: 'ContractViolation', message: 'bad task', code: 'contract_violation' },
    });
  });

  it('adds the fields of a child logger to every record, keeping the parent unchanged', () => {
    const { log, records } = capture({ fields: { replica: 'a' } });
    const child = log.child({ runId: 'run-9' });
    child.warn('slow tool', { tool: 'http.request' });
    log.info('parent');

    expect(records()).toEqual([
      expect.objectContaining({
        service: 'planner',
        replica: 'a',
        runId: 'run-9',
        tool: 'http.request',
        level: 'warn',
      }),
      expect.not.objectContaining({ runId: expect.anything() }),
    ]);
  });

  it('child loggers keep the level of their parent', () => {
    const { log, lines } = capture({ level: 'error' });
    log.child({ runId: 'r' }).warn('filtered');
    expect(lines).toEqual([]);
  });

  it('writes a readable line in pretty format', () => {
    const { log, lines } = capture({ format: 'pretty' });
    log.warn('message failed; will retry', { seq: 12, subject: 'dura.task.decide', err: new Error('boom') });

    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}\[planner\] message failed; will retry {2}seq=12 subject=dura\.task\.decide err=\{"name":"Error","message":"boom"\}$/,
    );
  });

  it("adds the active span's trace and span ids, and scoped fields such as the run id, to every line", async () => {
    const { log, records } = capture();
    // Tracing runs only when spans are exported: export them to a local receiver.
    await using receiver = await startOtlpReceiver();
    await using telemetry = await startTelemetry({
      service: 'planner',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    expect(telemetry.enabled).toBe(true);
    log.info('outside');
    let ids: { traceId: string; spanId: string } | undefined;
    await withLogFields({ runId: 'run-7' }, () =>
      withSpan(duraTracer(), 'work', {}, async (span) => {
        const { traceId, spanId } = span.spanContext();
        ids = { traceId, spanId };
        await Promise.resolve();
        log.info('inside', { step: 2 });
      }),
    );
    const [outside, inside] = records();
    expect(outside).not.toHaveProperty('traceId');
    expect(outside).not.toHaveProperty('runId');
    expect(inside).toMatchObject({ msg: 'inside', runId: 'run-7', step: 2, ...ids });
    expect(inside?.['traceId']).toMatch(/^[0-9a-f]{32}$/);
  });
});
