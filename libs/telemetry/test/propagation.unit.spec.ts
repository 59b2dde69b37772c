import { headers } from '@nats-io/nats-core';
import { context, createTraceState, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  contextFromTraceparent,
  currentTraceIds,
  extractContext,
  injectContext,
  traceparentOf,
  withSpan,
} from '../src/index';
import { useInMemoryTracing } from './in-memory-tracing';

const tracing = useInMemoryTracing();

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const remote = (traceState?: string) =>
  trace.setSpanContext(ROOT_CONTEXT, {
    traceId: TRACE_ID,
    spanId: SPAN_ID,
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    ...(traceState ? { traceState: createTraceState(traceState) } : {}),
  });

describe('trace context through NATS headers', () => {
  it('writes traceparent and tracestate, keeps other headers, and reads back the same span context', () => {
    const carrier = headers();
    carrier.set('Nats-Msg-Id', 'run-1@7');

    const returned = injectContext(carrier, remote('vendor=abc,other=1'));

    expect(returned).toBe(carrier);
    expect(carrier.get('traceparent')).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    expect(carrier.get('tracestate')).toBe('vendor=abc,other=1');
    expect(carrier.get('Nats-Msg-Id')).toBe('run-1@7');
    const extracted = trace.getSpanContext(extractContext(carrier, ROOT_CONTEXT));
    expect(extracted).toMatchObject({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1, isRemote: true });
    expect(extracted?.traceState?.serialize()).toBe('vendor=abc,other=1');
  });

  it('carries a real span so that a span started from the extracted context is its child in the same trace', async () => {
    const parent = tracing.tracer.startSpan('producer side');
    const carrier = injectContext(undefined, trace.setSpan(ROOT_CONTEXT, parent));
    parent.end();

    await withSpan(
      tracing.tracer,
      'consumer side',
      { parent: extractContext(carrier, ROOT_CONTEXT) },
      () => {},
    );

    const child = tracing.finished().find((s) => s.name === 'consumer side')!;
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(child.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
  });

  it('reads headers written by another client in a different case', () => {
    const carrier = headers();
    carrier.set('Traceparent', `00-${TRACE_ID}-${SPAN_ID}-00`);

    expect(trace.getSpanContext(extractContext(carrier, ROOT_CONTEXT))).toMatchObject({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      traceFlags: 0,
    });
  });

  it('writes nothing without a valid span, and extracts the base context from absent or malformed headers', () => {
    const untraced = injectContext(headers(), ROOT_CONTEXT);
    expect(untraced.has('traceparent')).toBe(false);

    const malformed = headers();
    malformed.set('traceparent', 'not-a-traceparent');
    const base = remote();
    expect(extractContext(malformed, base)).toBe(base);
    expect(extractContext(undefined, base)).toBe(base);
    expect(extractContext(headers(), base)).toBe(base);
  });
});

describe('trace context as a traceparent string (meta.trace)', () => {
  it('round-trips a span through traceparentOf and contextFromTraceparent', () => {
    const span = tracing.tracer.startSpan('decision');
    span.end();

    const traceparent = traceparentOf(span);
    const { traceId, spanId } = span.spanContext();
    expect(traceparent).toBe(`00-${traceId}-${spanId}-01`);
    expect(traceparentOf(trace.setSpan(ROOT_CONTEXT, span))).toBe(traceparent);
    expect(trace.getSpanContext(contextFromTraceparent(traceparent, undefined, ROOT_CONTEXT))).toMatchObject({
      traceId,
      spanId,
      isRemote: true,
    });
  });

  it('keeps tracestate when given, and falls back to the base context for a missing or malformed string', () => {
    const ctx = contextFromTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01`, 'k=v', ROOT_CONTEXT);
    expect(trace.getSpanContext(ctx)?.traceState?.get('k')).toBe('v');

    const base = remote();
    expect(contextFromTraceparent(undefined, undefined, base)).toBe(base);
    expect(contextFromTraceparent('', undefined, base)).toBe(base);
    expect(contextFromTraceparent('00-zz-yy-01', undefined, base)).toBe(base);
    expect(contextFromTraceparent(`00-${'0'.repeat(32)}-${SPAN_ID}-01`, undefined, base)).toBe(base);
  });

  it('has no traceparent outside a valid span', () => {
    expect(traceparentOf(ROOT_CONTEXT)).toBeUndefined();
    expect(
      traceparentOf(trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: SPAN_ID, traceFlags: 0 })),
    ).toBe(undefined);
  });
});

describe('currentTraceIds', () => {
  it('returns the ids of the active span inside withSpan, and undefined outside any span', async () => {
    expect(currentTraceIds()).toBeUndefined();

    const seen = await withSpan(tracing.tracer, 'logged work', {}, async (span) => {
      await Promise.resolve(); // the span stays active across awaits
      return { ids: currentTraceIds(), span: span.spanContext() };
    });

    expect(seen.ids).toEqual({ traceId: seen.span.traceId, spanId: seen.span.spanId });
    expect(currentTraceIds(context.active())).toBeUndefined();
  });
});
