export {
  createDuraClient,
  type DuraClient,
  type DuraClientOptions,
  type SignalOptions,
  type SignalResult,
  type SubmitResult,
  type SubmitRunInput,
} from './client';
export type { JetStreamHandles } from './jetstream-handles';
export {
  connectDuraClient,
  type ConnectDuraClientOptions,
  type ConnectedDuraClient,
  natsSecurityFromEnv,
} from './connect';
export { TERMINAL_EVENTS } from './terminal-events';
export type { WatchOptions } from './watch-run';
export type { EventPage, ListRunsFilter, RunPage, RunSummary, StateAt } from './read-api';
export {
  ApiError,
  ApiUnreachable,
  CLIENT_ERROR_CODES,
  ClientNotConfigured,
  NatsUnreachable,
  RunNotFound,
} from './errors';
export { formatEvent } from './format-event';
export type { ForkRunInput, ForkRunResult } from './fork';
export type { ScheduleView } from './schedules';
export {
  type DevState,
  devStateDir,
  devStateFile,
  DevStateSchema,
  DevStateTaken,
  readDevState,
  readDevStates,
  removeDevState,
  writeDevState,
} from './dev-state';
export { nextStep, type WaitDescription, waitStep } from './next-step';
export { NO_VERDICT_WAIT, verdictFor, type VerdictRun, type VerdictToSend } from './verdict';
export type { Parked } from './parked';
export type { FollowTokensOptions, LiveDelta } from './live-tokens';
export type { ApiSubmitOptions } from './api-submit';
