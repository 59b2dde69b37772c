/**
 * Producer and consumer spans for NATS, following OpenTelemetry's messaging semantic conventions. A publish
 * injects its own span's context into the message headers and a consumer continues from the context it
 * extracts, which is what stitches the planner, the tool gateway and the projector into one trace per run.
 * Generic on purpose: callers name destinations, message ids and consumer groups; no Dura domain here.
 */
import {
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { MsgHdrs } from '@nats-io/nats-core';
import {
  MESSAGING_ATTRS,
  MESSAGING_OPERATION,
  MESSAGING_SYSTEM_NATS,
  type MessagingOperationType,
} from './attributes';
import { extractContext, injectContext } from './propagation';
import { withSpan } from './with-span';

export interface MessagingAttributesInput {
  operationType: MessagingOperationType;
  /** The system's own name for the operation, e.g. `publish`, `process`, `fetch`. */
  operationName: string;
  /** The concrete subject, e.g. `dura.run.r-42`. */
  destination: string;
  /** The subject with its variable parts replaced, e.g. `dura.run.*`: low cardinality, used in the span name. */
  destinationTemplate?: string;
  /** `Nats-Msg-Id` of the message, when it has one. */
  messageId?: string;
  /** The durable consumer's name. */
  consumerGroup?: string;
}

/** The `messaging.*` attributes for one operation; absent inputs leave their attribute out. */
export function messagingAttributes(input: MessagingAttributesInput): Attributes {
  const attributes: Attributes = {
    [MESSAGING_ATTRS.system]: MESSAGING_SYSTEM_NATS,
    [MESSAGING_ATTRS.operationType]: input.operationType,
    [MESSAGING_ATTRS.operationName]: input.operationName,
    [MESSAGING_ATTRS.destinationName]: input.destination,
  };
  if (input.destinationTemplate !== undefined)
    attributes[MESSAGING_ATTRS.destinationTemplate] = input.destinationTemplate;
  if (input.messageId !== undefined) attributes[MESSAGING_ATTRS.messageId] = input.messageId;
  if (input.consumerGroup !== undefined) attributes[MESSAGING_ATTRS.consumerGroupName] = input.consumerGroup;
  return attributes;
}

/** The conventions' span name: `{operation name} {destination}`, preferring the low-cardinality template. */
export function messagingSpanName(operationName: string, destination: string, template?: string): string {
  return `${operationName} ${template ?? destination}`;
}

export interface ProducerSpanOptions {
  destination: string;
  destinationTemplate?: string;
  messageId?: string;
  /** The span this publish belongs under; the active context by default. */
  parent?: Context;
  /** Headers to add the trace context to (existing entries such as `Nats-Msg-Id` are kept); new ones otherwise. */
  headers?: MsgHdrs;
  operationName?: string;
  attributes?: Attributes;
}

/**
 * Runs `fn` inside a PRODUCER span and hands it headers that carry that span's trace context: publish the
 * message with them. A failure of `fn` is recorded on the span and rethrown.
 */
export function withProducerSpan<T>(
  tracer: Tracer,
  options: ProducerSpanOptions,
  fn: (headers: MsgHdrs, span: Span) => T | Promise<T>,
): Promise<T> {
  const operationName = options.operationName ?? 'publish';
  return withSpan(
    tracer,
    messagingSpanName(operationName, options.destination, options.destinationTemplate),
    {
      kind: SpanKind.PRODUCER,
      parent: options.parent,
      attributes: {
        ...messagingAttributes({ ...options, operationName, operationType: MESSAGING_OPERATION.send }),
        ...options.attributes,
      },
    },
    (span, ctx) => fn(injectContext(options.headers, ctx), span),
  );
}

export interface ConsumerSpanOptions {
  destination: string;
  destinationTemplate?: string;
  messageId?: string;
  consumerGroup?: string;
  /** The received message's headers: the producer's span becomes this span's parent. */
  headers?: MsgHdrs;
  /** Parent when the headers carry no trace context (e.g. a recorded `meta.trace`); the active context by default. */
  fallbackParent?: Context;
  /**
   * The trace the message carries on whoever sent it (e.g. a run's, from the `meta.trace` of its log): the
   * span's parent unless the headers already carry a span of that same trace. A sender's context from
   * another trace (a client with its own trace) becomes a span link, so neither trace loses the hop.
   */
  continues?: Context;
  /** `process` (default) for handling a message, `receive` for fetching it. */
  operationType?: typeof MESSAGING_OPERATION.process | typeof MESSAGING_OPERATION.receive;
  operationName?: string;
  attributes?: Attributes;
}

/**
 * Runs `fn` inside a CONSUMER span whose parent is the context carried by the message headers, so the
 * consumer's work joins the producer's trace. A failure of `fn` is recorded on the span and rethrown.
 */
export function withConsumerSpan<T>(
  tracer: Tracer,
  options: ConsumerSpanOptions,
  fn: (span: Span, ctx: Context) => T | Promise<T>,
): Promise<T> {
  const operationType = options.operationType ?? MESSAGING_OPERATION.process;
  const operationName = options.operationName ?? operationType;
  const { parent, links } = consumerParent(options);
  return withSpan(
    tracer,
    messagingSpanName(operationName, options.destination, options.destinationTemplate),
    {
      kind: SpanKind.CONSUMER,
      parent,
      ...(links.length > 0 ? { links } : {}),
      attributes: {
        ...messagingAttributes({ ...options, operationName, operationType }),
        ...options.attributes,
      },
    },
    fn,
  );
}

/** The consumer span's parent and links: the headers' context, or the trace it `continues` (see there). */
function consumerParent(options: ConsumerSpanOptions): { parent: Context; links: Link[] } {
  const fromHeaders = extractContext(options.headers, options.fallbackParent);
  const continued = options.continues ? trace.getSpanContext(options.continues) : undefined;
  if (!options.continues || !continued || !isSpanContextValid(continued))
    return { parent: fromHeaders, links: [] };
  const sender = trace.getSpanContext(extractContext(options.headers, ROOT_CONTEXT));
  if (!sender || !isSpanContextValid(sender)) return { parent: options.continues, links: [] };
  if (sender.traceId === continued.traceId) return { parent: fromHeaders, links: [] };
  return { parent: options.continues, links: [{ context: sender }] };
}
