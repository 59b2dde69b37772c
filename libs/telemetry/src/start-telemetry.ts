/**
 * The one call a service's `main.ts` makes to get tracing and metrics. Tracing runs on the OpenTelemetry
 * NodeSDK with W3C trace context and no auto-instrumentation (Dura creates its spans by hand); spans leave
 * the process only when OTEL_* asks for it, so tests and `dura dev` print nothing and open no sockets. Metrics
 * are always on and rendered in Prometheus format by the service's own HTTP server.
 */
import { randomUUID } from 'node:crypto';
import {
  context as contextApi,
  metrics as metricsApi,
  propagation,
  ProxyTracerProvider,
  trace,
  type Meter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { readTelemetryConfig, TelemetryConfigError, type Env, type TelemetryConfig } from './config';
import { createMetrics, type Metrics } from './metrics';
import { createSpanProcessors } from './span-processors';

export interface TelemetryOptions {
  /** service.name, unless OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise. */
  service: string;
  version?: string;
  /** Where the OTEL_* variables are read; `process.env` by default. */
  env?: Env;
  /** Upper bound for `shutdown()` flushing spans; default 5 s. */
  shutdownTimeoutMs?: number;
}

export interface Telemetry extends AsyncDisposable {
  /** True when spans are exported somewhere; false means they exist (with ids) but stay in the process. */
  readonly enabled: boolean;
  readonly serviceName: string;
  readonly tracer: Tracer;
  readonly meter: Meter;
  readonly metrics: Metrics;
  /** Flushes pending spans (bounded by the timeout), stops the SDK and releases the global registrations. */
  shutdown(): Promise<void>;
}

let running: string | undefined;

/**
 * Starts tracing and metrics for this process and registers them as the OpenTelemetry globals. One per
 * process: a second call before `shutdown()` throws, because the globals can hold only one provider.
 */
export async function startTelemetry(options: TelemetryOptions): Promise<Telemetry> {
  const env = options.env ?? process.env;
  const config = readTelemetryConfig({ service: options.service, version: options.version, env });
  if (running !== undefined)
    throw new TelemetryConfigError(`telemetry is already running for ${running}; shut it down first`);
  running = config.serviceName;
  try {
    return await start(config, options);
  } catch (err) {
    releaseGlobals();
    throw err;
  }
}

async function start(config: TelemetryConfig, options: TelemetryOptions): Promise<Telemetry> {
  const resourceAttributes = { 'service.instance.id': randomUUID(), ...config.resourceAttributes };
  const metrics = await createMetrics({ service: config.serviceName, resourceAttributes });
  metricsApi.setGlobalMeterProvider(metrics.provider);

  let stopTracing: () => Promise<void> = () => Promise.resolve();
  // NodeSDK also honours OTEL_SDK_DISABLED from the process environment; treat that the same way.
  // Tracing runs only when spans go somewhere. Recording spans nobody exports, and the async context
  // propagation they need, cost a service about a quarter of its CPU per step; with no SDK the API is a
  // no-op, and a context arriving in headers still passes through untouched.
  const disabled =
    config.disabled ||
    process.env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true' ||
    config.exports.length === 0;
  if (!disabled) {
    const [{ NodeSDK }, sdkTrace, resources] = await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/resources'),
    ]);
    const sdk = new NodeSDK({
      autoDetectResources: false,
      resource: resources.defaultResource().merge(resources.resourceFromAttributes(resourceAttributes)),
      spanProcessors: await createSpanProcessors(config.exports, config.batch),
      sampler: new sdkTrace.ParentBasedSampler({ root: new sdkTrace.AlwaysOnSampler() }),
      textMapPropagator: new W3CTraceContextPropagator(),
      instrumentations: [],
      // Empty lists stop the SDK from building OTLP metric and log exporters from the environment.
      metricReaders: [],
      logRecordProcessors: [],
    });
    sdk.start();
    stopTracing = () => sdk.shutdown();
  }

  const tracer = disabled
    ? new ProxyTracerProvider().getTracer(config.serviceName)
    : trace.getTracer(config.serviceName, options.version);
  const timeoutMs = options.shutdownTimeoutMs ?? 5_000;
  let stopped: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (stopped ??= (async () => {
      try {
        await withTimeout(Promise.allSettled([stopTracing(), metrics.shutdown()]), timeoutMs);
      } finally {
        releaseGlobals();
      }
    })());

  return {
    enabled: !disabled,
    serviceName: config.serviceName,
    tracer,
    meter: metrics.meter,
    metrics,
    shutdown,
    [Symbol.asyncDispose]: shutdown,
  };
}

/** Unregisters what start() registered, so a later start in this process (a test, a restart in place) can. */
function releaseGlobals(): void {
  trace.disable();
  propagation.disable();
  contextApi.disable();
  metricsApi.disable();
  running = undefined;
}

function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    // An unreachable collector must not hold up a shutting-down service past its budget.
    const timer = setTimeout(resolve, ms);
    timer.unref();
    void work.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
