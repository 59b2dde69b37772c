export { createEventStore, decodeStored, readRaw, EVENT_TYPE_HEADER, DIRECT_READ_LIMIT } from './event-store';
export type { EventStore, AppendOptions, AppendResult, ReadReport, SentEvent } from './event-store';
export { ensureStreams, streamConfigs, DEFAULT_STREAM_OPTIONS, MAX_CONSUMERS } from './streams';
export type { StreamOptions } from './streams';
export {
  ConcurrencyConflict,
  StreamUnavailable,
  StreamMisconfigured,
  CorruptEvent,
  EventTooLarge,
  EventOverLimits,
} from './errors';
export {
  isJetStreamNotReady,
  isJetStreamRefusal,
  isJsApiError,
  JS_CODES,
  mapAppendError,
} from './jetstream-errors';
export { retryOnConflict } from './retry-on-conflict';
export type { RetryOnConflictOptions } from './retry-on-conflict';
export {
  natsConnectionOptions,
  openNatsConnection,
  explainConnectError,
  explainPermissionViolation,
} from './nats-connection';
export type { OpenNatsOptions } from './nats-connection';
export { createRunReader } from './run-reads';
export type { RunReader, StoredRunMessage } from './run-reads';
export { createRunWakeups, connectionOf } from './run-wakeups';
export type { RunWaker, RunWakeups } from './run-wakeups';
export { followRun } from './follow-run';
export type { FollowOptions } from './follow-run';
export { pause } from './pause';
export { whileBucketSettles, BUCKET_SETTLE_MS } from './bucket-settle';
export { createScheduleStore, openScheduleBucket, parseScheduleSpec, ScheduleError } from './schedule-store';
export type { ScheduleStore, StoredSchedule } from './schedule-store';
export { createTriggerStore, openTriggerBucket, TriggerError } from './trigger-store';
export type { TriggerEntry, TriggerStore } from './trigger-store';
export {
  CATALOGUE_REFRESH_MS,
  CATALOGUE_TTL_MS,
  createCatalogueWriter,
  openCatalogueBucket,
  readCatalogue,
} from './catalogue-store';
export type { CatalogueContents, CatalogueEntry } from './catalogue-store';
export { RUN_LOG, RUN_TOKENS } from './run-reads';
export type { PerRunStream } from './run-reads';
export { createLiveTokens, readStoredTokens } from './live-tokens';
export type { LiveTokensOptions } from './live-tokens';
export { followLogAndTokens, followTokenFeed, supersededAttempts, tokenMessageOf } from './follow-tokens';
export type { FollowBothOptions, FollowTokensOptions, TokenFeedSources } from './follow-tokens';
export { TOKEN_RETENTION } from './streams';
export { createRunGates, gateEntryName, gateKeyToken, openGateBucket } from './run-gate-store';
export type { GateEntry, RunGateDeps, RunGates } from './run-gate-store';
export {
  askGate,
  GATE_ASK_QUEUE,
  GATE_ASK_TIMEOUT_MS,
  GateUnanswered,
  serveGateAsks,
  type GateDoor,
} from './run-gate-door';
export type { GateDoorDeps } from './run-gate-door';
export { bucketKeyLister, readKvMessages } from './bucket-keys';
export { getKvMessage, openKvBucket, openOnce, readKvRecord, type KvBucketOptions } from './kv-bucket';
