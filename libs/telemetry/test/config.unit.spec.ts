import { describe, expect, it } from 'vitest';
import { readTelemetryConfig, TelemetryConfigError, type Env } from '../src/index';

const read = (env: Env, version?: string) => readTelemetryConfig({ service: 'planner', version, env });

describe('readTelemetryConfig', () => {
  it('keeps export off when no endpoint or exporter is named', () => {
    const config = read({});

    expect(config.exports).toEqual([]);
    expect(config.disabled).toBe(false);
    expect(config.serviceName).toBe('planner');
    expect(config.resourceAttributes).toEqual({ 'service.name': 'planner' });
    expect(config.batch).toEqual({
      scheduledDelayMillis: 5000,
      exportTimeoutMillis: 30000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
    });
  });

  it('exports over http/protobuf to <endpoint>/v1/traces once OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318/' }).exports).toEqual([
      {
        kind: 'otlp',
        protocol: 'http/protobuf',
        url: 'http://jaeger:4318/v1/traces',
        headers: {},
        timeoutMillis: 10000,
      },
    ]);
  });

  it('uses the protocol, signal-specific endpoint, headers and timeout as the OTLP exporter spec orders them', () => {
    const [json] = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=a',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=b',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
    }).exports;
    expect(json).toEqual({
      kind: 'otlp',
      protocol: 'http/json',
      url: 'http://collector:4318/v1/traces',
      headers: { authorization: 'Bearer abc', 'x-team': 'b' },
      timeoutMillis: 2000,
    });

    const [specific] = read({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example:443/custom/path',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '700',
    }).exports;
    expect(specific).toMatchObject({ url: 'https://traces.example:443/custom/path', timeoutMillis: 700 });
  });

  it('sends gRPC to the endpoint itself, defaulting to localhost:4317 when only the exporter is named', () => {
    expect(
      read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })
        .exports,
    ).toMatchObject([{ kind: 'otlp', protocol: 'grpc', url: 'http://jaeger:4317' }]);
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).exports).toMatchObject(
      [{ url: 'http://localhost:4317' }],
    );
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp' }).exports).toMatchObject([
      { protocol: 'http/protobuf', url: 'http://localhost:4318/v1/traces' },
    ]);
  });

  it('honours OTEL_TRACES_EXPORTER: none wins over an endpoint, console is supported', () => {
    expect(
      read({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' }).exports,
    ).toEqual([]);
    expect(read({ OTEL_TRACES_EXPORTER: 'console' }).exports).toEqual([{ kind: 'console' }]);
    expect(read({ OTEL_TRACES_EXPORTER: 'otlp, console, otlp' }).exports.map((e) => e.kind)).toEqual([
      'otlp',
      'console',
    ]);
  });

  it('names the service from OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES, then the caller', () => {
    const fromAttributes = read(
      { OTEL_RESOURCE_ATTRIBUTES: 'service.name=planner-eu,deployment.environment.name=prod%20eu' },
      '1.0.0',
    );
    expect(fromAttributes.serviceName).toBe('planner-eu');
    expect(fromAttributes.resourceAttributes).toEqual({
      'service.name': 'planner-eu',
      'service.version': '1.0.0',
      'deployment.environment.name': 'prod eu',
    });
    expect(
      read({ OTEL_SERVICE_NAME: 'p2', OTEL_RESOURCE_ATTRIBUTES: 'service.name=planner-eu' }).serviceName,
    ).toBe('p2');
    expect(read({ OTEL_SERVICE_NAME: '  ' }).serviceName).toBe('planner');
  });

  it('reads OTEL_SDK_DISABLED and the batch settings', () => {
    const config = read({
      OTEL_SDK_DISABLED: 'TRUE',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_BSP_MAX_QUEUE_SIZE: '10',
    });
    expect(config.disabled).toBe(true);
    expect(config.batch).toMatchObject({ scheduledDelayMillis: 100, maxQueueSize: 10 });
    expect(read({ OTEL_SDK_DISABLED: 'false' }).disabled).toBe(false);
  });

  it.each([
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' },
      /OTEL_EXPORTER_OTLP_PROTOCOL: unsupported protocol "thrift"/,
    ],
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER: unsupported exporter "zipkin"/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      /OTEL_EXPORTER_OTLP_ENDPOINT: expected an http\(s\) URL/,
    ],
    [{ OTEL_BSP_SCHEDULE_DELAY: '-5' }, /OTEL_BSP_SCHEDULE_DELAY: expected a non-negative integer, got "-5"/],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'novalue' }, /OTEL_RESOURCE_ATTRIBUTES: expected key=value pairs/],
  ])('refuses malformed settings with a TelemetryConfigError naming the variable (%o)', (env, message) => {
    const error = (() => {
      try {
        return read(env);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(TelemetryConfigError);
    expect(error).toMatchObject({ code: 'telemetry_config_error', retryable: false });
    expect((error as Error).message).toMatch(message);
  });
});
