export {
  loadConfig,
  configFields,
  ConfigError,
  CONFIG_EXIT_CODE,
  loadNatsSecurity,
  secretsConfigShape,
  configShapes,
} from './config';
export { createLogger, withLogFields } from './logger';
export { REDACTED, SECRET_FIELD_NAMES, redactForLog, scrubText } from './log-redaction';
export type { Logger, LogLevel, LogFields } from './logger';
export { connectNats } from './nats';
export { ensureStreamsOnStart, waitUntilReachable, startBackoffMs } from './start-wait';
export type { StartWaitOptions } from './start-wait';
export type { NatsHandles } from './nats';
export {
  buildDeadLetter,
  publishDeadLetter,
  deadLetterFromMsg,
  DEAD_LETTER_PAYLOAD_LIMIT,
} from './dead-letter';
export type { DeadLetterInput } from './dead-letter';
export { startConsumerLoop } from './consumer-loop';
export type { ConsumerLoop, ConsumerLoopOptions, DrainOptions, DrainReport } from './consumer-loop';
export { ensureDurableConsumer } from './durable-consumer';
export type { DurableConsumerSpec } from './durable-consumer';
export { firstPublished, REQUEUED_FROM } from './requeue';
export { RetryLater } from './retry-later';
export { withData } from './message-failure';
export { BODY_TOO_LARGE, DEFAULT_BIND_HOST, httpStatusOf, startHttpServer } from './http-server';
export { isLoopbackHost, loopbackRefusal } from './loopback-guard';
export type { LoopbackRefusal, RequestOrigin } from './loopback-guard';
export { readinessRoute } from './readiness-route';
export type { Route, HttpResponse, HttpServerHandle } from './http-server';
export { runMain, DEFAULT_SHUTDOWN_GRACE_MS } from './main-runner';
export type { Stoppable, StopOptions } from './main-runner';
export { runService, startService } from './run-service';
export type {
  ServiceBaseConfig,
  ServiceContext,
  ServiceNeed,
  ServiceSpec,
  ServiceStartContext,
  StartedService,
} from './run-service';
export { failpoint, FAILPOINTS } from './failpoint';
export type { FailpointName } from './failpoint';
export {
  duraTracer,
  duraMeter,
  metricsRoute,
  startServiceTelemetry,
  INSTRUMENTATION_SCOPE,
} from './telemetry';
export type { ServiceTelemetry } from './telemetry';
export { announcingWhileStarted, startCatalogueAnnouncer } from './catalogue-announcer';
export type { CatalogueAnnouncer, CatalogueAnnouncerOptions } from './catalogue-announcer';
