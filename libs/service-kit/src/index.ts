export {
  CONFIG_EXIT_CODE,
  ConfigError,
  configFields,
  configShapes,
  loadConfig,
  loadNatsSecurity,
  secretsConfigShape,
} from './config';
export { createLogger, type LogFields, type Logger, type LogLevel, withLogFields } from './logger';
export { REDACTED, redactForLog, scrubText, SECRET_FIELD_NAMES } from './log-redaction';
export { connectNats, type NatsHandles } from './nats';
export {
  ensureStreamsOnStart,
  startBackoffMs,
  type StartWaitOptions,
  waitUntilReachable,
} from './start-wait';
export {
  buildDeadLetter,
  DEAD_LETTER_PAYLOAD_LIMIT,
  deadLetterFromMsg,
  type DeadLetterInput,
  publishDeadLetter,
} from './dead-letter';
export {
  type ConsumerLoop,
  type ConsumerLoopOptions,
  type DrainOptions,
  type DrainReport,
  startConsumerLoop,
} from './consumer-loop';
export { type DurableConsumerSpec, ensureDurableConsumer } from './durable-consumer';
export { firstPublished, REQUEUED_FROM } from './requeue';
export { RetryLater } from './retry-later';
export { withData } from './message-failure';
export {
  BODY_TOO_LARGE,
  DEFAULT_BIND_HOST,
  type HttpResponse,
  type HttpServerHandle,
  httpStatusOf,
  type Route,
  startHttpServer,
} from './http-server';
export { isLoopbackHost, loopbackRefusal, type LoopbackRefusal, type RequestOrigin } from './loopback-guard';
export { readinessRoute } from './readiness-route';
export { DEFAULT_SHUTDOWN_GRACE_MS, runMain, type StopOptions, type Stoppable } from './main-runner';
export {
  runService,
  type ServiceBaseConfig,
  type ServiceContext,
  type ServiceNeed,
  type ServiceSpec,
  type ServiceStartContext,
  type StartedService,
  startService,
} from './run-service';
export { failpoint, type FailpointName, FAILPOINTS } from './failpoint';
export {
  duraMeter,
  duraTracer,
  INSTRUMENTATION_SCOPE,
  metricsRoute,
  type ServiceTelemetry,
  startServiceTelemetry,
} from './telemetry';
export {
  announcingWhileStarted,
  type CatalogueAnnouncer,
  type CatalogueAnnouncerOptions,
  startCatalogueAnnouncer,
} from './catalogue-announcer';
