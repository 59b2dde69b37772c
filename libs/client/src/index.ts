export { createDuraClient } from './client';
export type { JetStreamHandles } from './jetstream-handles';
export type {
  DuraClient,
  DuraClientOptions,
  SignalOptions,
  SignalResult,
  SubmitRunInput,
  SubmitResult,
} from './client';
export { connectDuraClient, natsSecurityFromEnv } from './connect';
export type { ConnectDuraClientOptions, ConnectedDuraClient } from './connect';
export { TERMINAL_EVENTS } from './terminal-events';
export type { WatchOptions } from './watch-run';
export type { ListRunsFilter, RunPage, RunSummary, EventPage, StateAt } from './read-api';
export {
  ApiError,
  ApiUnreachable,
  ClientNotConfigured,
  CLIENT_ERROR_CODES,
  NatsUnreachable,
  RunNotFound,
} from './errors';
export { formatEvent } from './format-event';
export type { ForkRunInput, ForkRunResult } from './fork';
export type { ScheduleView } from './schedules';
export {
  DevStateSchema,
  DevStateTaken,
  devStateDir,
  devStateFile,
  readDevState,
  readDevStates,
  removeDevState,
  writeDevState,
} from './dev-state';
export type { DevState } from './dev-state';
export { nextStep, waitStep } from './next-step';
export { verdictFor, NO_VERDICT_WAIT } from './verdict';
export type { VerdictRun, VerdictToSend } from './verdict';
export type { WaitDescription } from './next-step';
export type { Parked } from './parked';
export type { LiveDelta, FollowTokensOptions } from './live-tokens';
export type { ApiSubmitOptions } from './api-submit';
