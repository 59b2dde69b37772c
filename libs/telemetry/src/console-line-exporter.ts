import { SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode, hrTimeToMilliseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/** One readable line per span: `span <name> <ms>ms trace=<id> span=<id>[ parent=<id>][ ERROR <message>]`. */
export function spanLine(span: ReadableSpan): string {
  const context = span.spanContext();
  const ms = hrTimeToMilliseconds(span.duration).toFixed(1);
  const parent = span.parentSpanContext?.spanId;
  const error =
    span.status.code === SpanStatusCode.ERROR ? ` ERROR ${span.status.message ?? ''}`.trimEnd() : '';
  return `span ${span.name} ${ms}ms trace=${context.traceId} span=${context.spanId}${parent ? ` parent=${parent}` : ''}${error}`;
}

/**
 * The `console` trace exporter: a line per span on stderr. The SDK's own console exporter prints every span
 * as a multi-line object, some 900 lines for a five-step run, which buries the run's own output.
 */
export class ConsoleLineExporter implements SpanExporter {
  constructor(
    private readonly write: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) this.write(spanLine(span));
    done({ code: ExportResultCode.SUCCESS });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
