import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BatchSpanProcessor,
  NoopSpanProcessor,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { readTelemetryConfig } from '../src/index';
import { ConsoleLineExporter } from '../src/console-line-exporter';
import { createSpanProcessors } from '../src/span-processors';

async function processorsFor(env: Record<string, string>) {
  const config = readTelemetryConfig({ service: 'probe', env });
  const processors = await createSpanProcessors(config.exports, config.batch);
  // Nothing was exported, so shutting down sends nothing; it proves each exporter was built completely.
  await Promise.all(processors.map((p) => p.shutdown()));
  return processors;
}

describe('createSpanProcessors', () => {
  it('uses one no-op processor when there is nothing to export', async () => {
    const processors = await processorsFor({});
    expect(processors).toHaveLength(1);
    expect(processors[0]).toBeInstanceOf(NoopSpanProcessor);
  });

  it.each(['http/protobuf', 'http/json', 'grpc'])(
    'builds a batching OTLP exporter for %s',
    async (protocol) => {
      const processors = await processorsFor({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=dura',
      });
      expect(processors).toHaveLength(1);
      expect(processors[0]).toBeInstanceOf(BatchSpanProcessor);
    },
  );

  it('exports synchronously to the console when asked, alongside OTLP', async () => {
    const processors = await processorsFor({ OTEL_TRACES_EXPORTER: 'console,otlp' });
    expect(processors.map((p) => p.constructor)).toEqual([SimpleSpanProcessor, BatchSpanProcessor]);
  });
});

describe('the console exporter', () => {
  it('prints one line per span: name, duration, trace, span, parent and an error', async () => {
    const lines: string[] = [];
    const provider = new TracerProvider({
      spanProcessors: [
        new SimpleSpanProcessor({ exporter: new ConsoleLineExporter((line) => lines.push(line)) }),
      ],
    });
    const tracer = provider.getTracer('probe');
    const parent = tracer.startSpan('dura.run');
    const child = tracer.startSpan('chat scripted', {}, trace.setSpan(context.active(), parent));
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'model refused' });
    child.end();
    parent.end();
    await provider.forceFlush();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^span chat scripted \d+\.\dms trace=[0-9a-f]{32} span=[0-9a-f]{16} parent=[0-9a-f]{16} ERROR model refused$/,
    );
    expect(lines[1]).toMatch(/^span dura\.run \d+\.\dms trace=[0-9a-f]{32} span=[0-9a-f]{16}$/);
    await provider.shutdown();
  });
});
