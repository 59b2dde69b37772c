/**
 * Metrics in Prometheus text format, served by the service's own HTTP server rather than a second port:
 * a MeterProvider whose only reader is the Prometheus exporter with its server kept off, rendered on
 * demand. It is independent of trace export, so `/metrics` works in every environment.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Meter, MeterProvider } from '@opentelemetry/api';
import type { ExporterConfig } from '@opentelemetry/exporter-prometheus';
import {
  declareCounter,
  declareGauge,
  declareHistogram,
  type CounterInstrument,
  type GaugeInstrument,
  type GaugeObserver,
  type HistogramInstrument,
  type HistogramSpec,
  type MetricSpec,
} from './instruments';

/** The content type of the classic Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface MetricsOptions {
  service: string;
  version?: string;
  /** Extra resource attributes; they appear once, on `target_info`, not on every series. */
  resourceAttributes?: Record<string, string>;
  /** Name of the meter the typed helpers use (the `otel_scope_name` label). Default `dura`. */
  meterName?: string;
}

export interface Metrics {
  readonly provider: MeterProvider;
  readonly meter: Meter;
  counter<L extends string = never>(spec: MetricSpec<L>): CounterInstrument<L>;
  histogram<L extends string = never>(spec: HistogramSpec<L>): HistogramInstrument<L>;
  gauge<L extends string = never>(spec: MetricSpec<L>, observer: GaugeObserver<L>): GaugeInstrument;
  /** Collects every instrument now and renders the Prometheus text exposition. */
  render(): Promise<string>;
  /** A `node:http` listener answering any request with `render()`, for servers that take raw handlers. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Stops the provider; later renders fail. Safe to call twice. */
  shutdown(): Promise<void>;
}

const SERIALIZER: Required<Pick<ExporterConfig, 'withoutScopeInfo' | 'withoutTargetInfo'>> = {
  withoutScopeInfo: false,
  withoutTargetInfo: false,
};

/** A fresh, unregistered metrics pipeline for one service (the SDK modules load on first call). */
export async function createMetrics(options: MetricsOptions): Promise<Metrics> {
  const [{ MeterProvider: SdkMeterProvider }, { PrometheusExporter, PrometheusSerializer }, resources] =
    await Promise.all([
      import('@opentelemetry/sdk-metrics'),
      import('@opentelemetry/exporter-prometheus'),
      import('@opentelemetry/resources'),
    ]);
  const reader = new PrometheusExporter({ preventServerStart: true, ...SERIALIZER });
  const resource = resources.defaultResource().merge(
    resources.resourceFromAttributes({
      ...options.resourceAttributes,
      'service.name': options.service,
      ...(options.version === undefined ? {} : { 'service.version': options.version }),
    }),
  );
  const provider = new SdkMeterProvider({ resource, readers: [reader] });
  const meter = provider.getMeter(options.meterName ?? 'dura');
  // Built like the exporter's own, so render() and its built-in endpoint would print the same text.
  const serializer = new PrometheusSerializer(
    undefined,
    false,
    undefined,
    SERIALIZER.withoutTargetInfo,
    SERIALIZER.withoutScopeInfo,
  );

  const render = async (): Promise<string> => {
    const { resourceMetrics } = await reader.collect();
    return serializer.serialize(resourceMetrics);
  };
  let stopped: Promise<void> | undefined;

  return {
    provider,
    meter,
    counter: (spec) => declareCounter(meter, spec),
    histogram: (spec) => declareHistogram(meter, spec),
    gauge: (spec, observer) => declareGauge(meter, spec, observer),
    render,
    handle: (_req, res) => {
      render().then(
        (text) => res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE }).end(text),
        (err: unknown) =>
          res
            .writeHead(500, { 'content-type': 'text/plain' })
            .end(`# metrics collection failed: ${String(err)}`),
      );
    },
    shutdown: () => (stopped ??= provider.shutdown()),
  };
}
