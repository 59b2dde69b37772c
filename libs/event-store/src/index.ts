export {
  type AppendOptions,
  type AppendResult,
  createEventStore,
  decodeStored,
  DIRECT_READ_LIMIT,
  EVENT_TYPE_HEADER,
  type EventStore,
  readRaw,
  type ReadReport,
  type SentEvent,
} from './event-store';
export {
  DEFAULT_STREAM_OPTIONS,
  ensureStreams,
  MAX_CONSUMERS,
  streamConfigs,
  type StreamOptions,
  TOKEN_RETENTION,
} from './streams';
export {
  ConcurrencyConflict,
  CorruptEvent,
  EventOverLimits,
  EventTooLarge,
  StreamMisconfigured,
  StreamUnavailable,
} from './errors';
export {
  isJetStreamNotReady,
  isJetStreamRefusal,
  isJsApiError,
  JS_CODES,
  mapAppendError,
} from './jetstream-errors';
export { retryOnConflict, type RetryOnConflictOptions } from './retry-on-conflict';
export {
  explainConnectError,
  explainPermissionViolation,
  natsConnectionOptions,
  openNatsConnection,
  type OpenNatsOptions,
} from './nats-connection';
export {
  createRunReader,
  type PerRunStream,
  RUN_LOG,
  RUN_TOKENS,
  type RunReader,
  type StoredRunMessage,
} from './run-reads';
export { connectionOf, createRunWakeups, type RunWaker, type RunWakeups } from './run-wakeups';
export { type FollowOptions, followRun } from './follow-run';
export { pause } from './pause';
export { BUCKET_SETTLE_MS, whileBucketSettles } from './bucket-settle';
export {
  createScheduleStore,
  openScheduleBucket,
  parseScheduleSpec,
  ScheduleError,
  type ScheduleStore,
  type StoredSchedule,
} from './schedule-store';
export {
  createTriggerStore,
  openTriggerBucket,
  type TriggerEntry,
  TriggerError,
  type TriggerStore,
} from './trigger-store';
export {
  CATALOGUE_REFRESH_MS,
  CATALOGUE_TTL_MS,
  type CatalogueContents,
  type CatalogueEntry,
  createCatalogueWriter,
  openCatalogueBucket,
  readCatalogue,
} from './catalogue-store';
export { createLiveTokens, type LiveTokensOptions, readStoredTokens } from './live-tokens';
export {
  type FollowBothOptions,
  followLogAndTokens,
  followTokenFeed,
  type FollowTokensOptions,
  supersededAttempts,
  type TokenFeedSources,
  tokenMessageOf,
} from './follow-tokens';
export {
  createRunGates,
  type GateEntry,
  gateEntryName,
  gateKeyToken,
  openGateBucket,
  type RunGateDeps,
  type RunGates,
} from './run-gate-store';
export {
  askGate,
  GATE_ASK_QUEUE,
  GATE_ASK_TIMEOUT_MS,
  type GateDoor,
  type GateDoorDeps,
  GateUnanswered,
  serveGateAsks,
} from './run-gate-door';
export { bucketKeyLister, readKvMessages } from './bucket-keys';
export {
  createKvEntry,
  getKvEntry,
  getKvMessage,
  type KvBucketOptions,
  openKvBucket,
  openOnce,
  readKvRecord,
} from './kv-bucket';
