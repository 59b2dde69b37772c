import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, beforeAll } from 'vitest';

/**
 * A real SDK tracer that keeps finished spans in memory, plus the async context manager services get from
 * the NodeSDK, so unit specs see exactly the spans and parent links the helpers produce. Nothing is
 * registered as the global tracer: the helpers must work with the tracer they are handed.
 */
export function useInMemoryTracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const contextManager = new AsyncLocalStorageContextManager();

  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
  });
  afterEach(() => exporter.reset());
  afterAll(async () => {
    context.disable();
    await provider.shutdown();
  });

  return {
    tracer: provider.getTracer('unit-spec'),
    finished: () => exporter.getFinishedSpans(),
  };
}
