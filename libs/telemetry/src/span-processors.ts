/**
 * Turns the trace-export settings into span processors. Exporters are imported on demand, so a process with
 * export off never loads the gRPC stack, and every exporter gets its URL, headers and timeout explicitly
 * (an explicit value wins over the exporter's own reading of `process.env`).
 */
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import type { BatchSettings, TraceExport } from './config';
import { ConsoleLineExporter } from './console-line-exporter';

/** One processor per configured export (a no-op one for none; start-up runs no tracing then anyway). */
export async function createSpanProcessors(
  exports: TraceExport[],
  batch: BatchSettings,
): Promise<SpanProcessor[]> {
  const sdk = await import('@opentelemetry/sdk-trace');
  if (exports.length === 0) return [new sdk.NoopSpanProcessor()];
  return Promise.all(
    exports.map(async (target): Promise<SpanProcessor> => {
      if (target.kind === 'console')
        return new sdk.SimpleSpanProcessor({ exporter: new ConsoleLineExporter() });
      return new sdk.BatchSpanProcessor({ exporter: await otlpExporter(target), ...batch });
    }),
  );
}

async function otlpExporter(target: Extract<TraceExport, { kind: 'otlp' }>) {
  const common = { url: target.url, timeoutMillis: target.timeoutMillis };
  switch (target.protocol) {
    case 'http/protobuf': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
      return new OTLPTraceExporter({ ...common, headers: target.headers });
    }
    case 'http/json': {
      const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
      return new OTLPTraceExporter({ ...common, headers: target.headers });
    }
    case 'grpc': {
      const [{ OTLPTraceExporter }, { createEmptyMetadata }] = await Promise.all([
        import('@opentelemetry/exporter-trace-otlp-grpc'),
        import('@opentelemetry/otlp-grpc-exporter-base'),
      ]);
      const metadata = createEmptyMetadata();
      for (const [key, value] of Object.entries(target.headers)) metadata.set(key, value);
      return new OTLPTraceExporter({ ...common, metadata });
    }
  }
}
