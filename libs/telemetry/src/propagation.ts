/**
 * W3C trace context across process boundaries: in NATS message headers (live hops) and as a `traceparent`
 * string in each event's `meta.trace` (so a run resumed on another replica, days later, continues the same
 * trace). One W3C propagator instance is used directly rather than the global one, so these helpers behave
 * the same whether or not the process started the SDK (the client SDK and unit tests do not).
 */
import {
  context as contextApi,
  isSpanContextValid,
  ROOT_CONTEXT,
  trace,
  type SpanContext,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { headers as natsHeaders, Match, type MsgHdrs } from '@nats-io/nats-core';

const propagator = new W3CTraceContextPropagator();

const headerSetter: TextMapSetter<MsgHdrs> = {
  set: (carrier, key, value) => carrier.set(key, value),
};

const headerGetter: TextMapGetter<MsgHdrs> = {
  keys: (carrier) => carrier.keys(),
  // Another client may have written `Traceparent`; MsgHdrs.get answers '' for a missing key.
  get: (carrier, key) => carrier.get(key, Match.IgnoreCase) || undefined,
};

type StringCarrier = Record<string, string | undefined>;

const recordSetter: TextMapSetter<StringCarrier> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

const recordGetter: TextMapGetter<StringCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/**
 * Writes `traceparent` (and `tracestate` when there is one) for `ctx` into `headers`, creating them if absent.
 * Writes nothing when `ctx` holds no valid span, so an untraced publish carries no stale context.
 */
export function injectContext(headers?: MsgHdrs, ctx: Context = contextApi.active()): MsgHdrs {
  const target = headers ?? natsHeaders();
  propagator.inject(ctx, target, headerSetter);
  return target;
}

/** The context carried by `headers` on top of `base`; `base` itself when there is none or it is malformed. */
export function extractContext(headers: MsgHdrs | undefined, base: Context = contextApi.active()): Context {
  return headers ? propagator.extract(base, headers, headerGetter) : base;
}

/** The context a recorded `traceparent` (e.g. an event's `meta.trace`) points at; `base` when absent or malformed. */
export function contextFromTraceparent(
  traceparent: string | undefined,
  tracestate?: string,
  base: Context = contextApi.active(),
): Context {
  if (!traceparent) return base;
  return propagator.extract(base, { traceparent, tracestate }, recordGetter);
}

/** The span context a recorded `traceparent` names (e.g. to link to it); undefined when absent or malformed. */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const spanContext = trace.getSpanContext(contextFromTraceparent(traceparent, undefined, ROOT_CONTEXT));
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
}

/**
 * The W3C `traceparent` of a span, or of the span in a context (the active one by default), e.g.
 * `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`; undefined when there is no valid span.
 */
export function traceparentOf(source: Context | Span = contextApi.active()): string | undefined {
  const ctx = isSpan(source) ? trace.setSpan(contextApi.active(), source) : source;
  const carrier: StringCarrier = {};
  propagator.inject(ctx, carrier, recordSetter);
  return carrier['traceparent'];
}

/** Trace and span id of the active span (for log lines), or undefined outside any valid span. */
export function currentTraceIds(
  ctx: Context = contextApi.active(),
): { traceId: string; spanId: string } | undefined {
  const spanContext = trace.getSpanContext(ctx);
  if (!spanContext || !isSpanContextValid(spanContext)) return undefined;
  return { traceId: spanContext.traceId, spanId: spanContext.spanId };
}

function isSpan(source: Context | Span): source is Span {
  return typeof (source as Partial<Span>).spanContext === 'function';
}
