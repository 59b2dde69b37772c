export { startTelemetry } from './start-telemetry';
export type { Telemetry, TelemetryOptions } from './start-telemetry';
export { readTelemetryConfig, TelemetryConfigError } from './config';
export type { Env, OtlpProtocol, TelemetryConfig, TraceExport, BatchSettings } from './config';
export {
  injectContext,
  extractContext,
  contextFromTraceparent,
  spanContextOf,
  traceparentOf,
  currentTraceIds,
} from './propagation';
export { withSpan, recordError } from './with-span';
export type { SpanOptions } from './with-span';
export {
  withProducerSpan,
  withConsumerSpan,
  messagingAttributes,
  messagingSpanName,
} from './messaging-spans';
export type { ProducerSpanOptions, ConsumerSpanOptions, MessagingAttributesInput } from './messaging-spans';
export {
  RESOURCE_ATTRS,
  MESSAGING_ATTRS,
  MESSAGING_SYSTEM_NATS,
  MESSAGING_OPERATION,
  GEN_AI_ATTRS,
  ERROR_TYPE_ATTR,
  DURA_ATTRS,
  DURA_SPAN_EVENTS,
} from './attributes';
export type { MessagingOperationType } from './attributes';
export { createMetrics, PROMETHEUS_CONTENT_TYPE } from './metrics';
export type { Metrics, MetricsOptions } from './metrics';
export { declareCounter, declareHistogram, declareGauge, DEFAULT_SECONDS_BOUNDARIES } from './instruments';
export type {
  MetricSpec,
  HistogramSpec,
  Labels,
  CounterInstrument,
  HistogramInstrument,
  GaugeInstrument,
  GaugeObserver,
} from './instruments';
export { DURA_METRICS } from './metric-catalogue';
