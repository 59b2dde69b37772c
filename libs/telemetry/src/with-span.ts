/**
 * One way to run code inside a span: the span is active for the callback (so nested spans and injected
 * headers hang under it), always ends, and a failure is recorded on it with error status and `error.type`
 * before the error is rethrown unchanged. Hand-written spans elsewhere would otherwise each forget one of these.
 */
import {
  context as contextApi,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanKind,
  type Tracer,
} from '@opentelemetry/api';
import { ERROR_TYPE_ATTR } from './attributes';

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** The parent context; the active context by default. */
  parent?: Context;
}

/** Runs `fn` inside a new span named `name`, ends the span, and records a thrown error on it before rethrowing. */
export function withSpan<T>(
  tracer: Tracer,
  name: string,
  options: SpanOptions,
  fn: (span: Span, ctx: Context) => T | Promise<T>,
): Promise<T> {
  const parent = options.parent ?? contextApi.active();
  const span = tracer.startSpan(
    name,
    { kind: options.kind, attributes: options.attributes, links: options.links },
    parent,
  );
  const ctx = trace.setSpan(parent, span);
  return contextApi.with(ctx, async () => {
    try {
      return await fn(span, ctx);
    } catch (err) {
      recordError(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Marks `span` failed: the exception as a span event, error status with the message, and `error.type`. */
export function recordError(span: Span, err: unknown): void {
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  span.setAttribute(ERROR_TYPE_ATTR, errorType(error));
}

function errorType(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.length > 0 ? code : error.name;
}
