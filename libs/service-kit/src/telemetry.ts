import { metrics, trace, type Meter, type Tracer } from '@opentelemetry/api';
import { PROMETHEUS_CONTENT_TYPE, startTelemetry, type Telemetry } from '@dura/telemetry';
import { startHttpServer, type HttpServerHandle, type Route } from './http-server';
import type { Logger } from './logger';
import { readinessRoute } from './readiness-route';

/** The instrumentation scope of every Dura span and metric. */
export const INSTRUMENTATION_SCOPE = 'dura';

/**
 * The tracer every Dura library uses. A proxy until `startServiceTelemetry` registers the SDK, so code may
 * take it at import time; without the SDK (tests, embedding apps without OpenTelemetry) spans are no-ops.
 */
export function duraTracer(): Tracer {
  return trace.getTracer(INSTRUMENTATION_SCOPE);
}

/**
 * The meter every Dura library declares its instruments on. Unlike the tracer it is not a proxy:
 * instruments must be declared after `startServiceTelemetry`, i.e. when a service is constructed.
 */
export function duraMeter(): Meter {
  return metrics.getMeter(INSTRUMENTATION_SCOPE);
}

/** `GET /metrics`: every instrument of this process in the Prometheus text format. */
export function metricsRoute(telemetry: Pick<Telemetry, 'metrics'>): Route {
  return {
    method: 'GET',
    path: '/metrics',
    handle: async () => ({
      status: 200,
      text: await telemetry.metrics.render(),
      headers: { 'content-type': PROMETHEUS_CONTENT_TYPE },
    }),
  };
}

export interface ServiceTelemetry {
  telemetry: Telemetry;
  /** The metrics server, when a port was given. */
  http: HttpServerHandle | undefined;
  /**
   * Declares the service ready once it is started: `/readyz` answers 200 while `check` resolves to undefined,
   * and 503 with its reason otherwise (and 503 "starting" before this is called).
   */
  ready(check: () => Promise<string | undefined>): void;
  /** While starting: what `/readyz` gives as its reason (e.g. waiting for NATS); undefined: "starting". */
  waiting: (reason: string | undefined) => void;
  /** Closes the metrics server and flushes spans (bounded); call last when stopping. */
  stop(): Promise<void>;
}

/**
 * Starts tracing (exported only when OTEL_* asks for it) and metrics for a service process, and with
 * `metricsPort` serves `/metrics`, `/healthz` (alive) and `/readyz` (started and connected) on it (0 picks
 * a free port; the URL is logged).
 */
export async function startServiceTelemetry(options: {
  service: string;
  log: Logger;
  metricsPort?: number | undefined;
  /** The address the metrics server listens on (default 127.0.0.1; containers set 0.0.0.0). */
  metricsHost?: string | undefined;
  routes?: Route[];
}): Promise<ServiceTelemetry> {
  const telemetry = await startTelemetry({ service: options.service });
  let http: HttpServerHandle | undefined;
  let readiness: (() => Promise<string | undefined>) | undefined;
  let waitingFor: string | undefined;
  if (options.metricsPort !== undefined) {
    http = await startHttpServer({
      port: options.metricsPort,
      host: options.metricsHost,
      routes: [
        metricsRoute(telemetry),
        {
          method: 'GET',
          path: '/healthz',
          handle: () => Promise.resolve({ status: 200, body: { ok: true } }),
        },
        readinessRoute(() => (readiness ? readiness() : Promise.resolve(waitingFor ?? 'starting'))),
        ...(options.routes ?? []),
      ],
      log: options.log,
    });
    options.log.info('metrics listening', { url: `${http.url}/metrics`, address: http.address });
  }
  if (telemetry.enabled) options.log.info('exporting traces', { service: telemetry.serviceName });
  return {
    telemetry,
    http,
    ready(check) {
      readiness = check;
    },
    waiting: (reason) => {
      waitingFor = reason;
    },
    async stop() {
      await http?.close();
      await telemetry.shutdown();
    },
  };
}
