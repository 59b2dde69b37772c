export { startTelemetry, type Telemetry, type TelemetryOptions } from './start-telemetry';
export {
  type BatchSettings,
  type Env,
  type OtlpProtocol,
  readTelemetryConfig,
  type TelemetryConfig,
  TelemetryConfigError,
  type TraceExport,
} from './config';
export {
  contextFromTraceparent,
  currentTraceIds,
  extractContext,
  injectContext,
  spanContextOf,
  traceparentOf,
} from './propagation';
export { recordError, type SpanOptions, withSpan } from './with-span';
export {
  type ConsumerSpanOptions,
  messagingAttributes,
  type MessagingAttributesInput,
  messagingSpanName,
  type ProducerSpanOptions,
  withConsumerSpan,
  withProducerSpan,
} from './messaging-spans';
export {
  DURA_ATTRS,
  DURA_SPAN_EVENTS,
  ERROR_TYPE_ATTR,
  GEN_AI_ATTRS,
  MESSAGING_ATTRS,
  MESSAGING_OPERATION,
  MESSAGING_SYSTEM_NATS,
  type MessagingOperationType,
  RESOURCE_ATTRS,
} from './attributes';
export { createMetrics, type Metrics, type MetricsOptions, PROMETHEUS_CONTENT_TYPE } from './metrics';
export {
  type CounterInstrument,
  declareCounter,
  declareGauge,
  declareHistogram,
  DEFAULT_SECONDS_BOUNDARIES,
  type GaugeInstrument,
  type GaugeObserver,
  type HistogramInstrument,
  type HistogramSpec,
  type Labels,
  type MetricSpec,
} from './instruments';
export { DURA_METRICS } from './metric-catalogue';
