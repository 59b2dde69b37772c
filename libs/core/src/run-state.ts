import type { Decision, ErrorInfo, JsonObject, JsonValue, RunRequest, Usage } from '@dura/contracts';

export type RunStatus =
  'none' | 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled' | 'rejected';

/** `unknown`: an unsafe call was interrupted and nobody knows whether it took effect; an operator decides. */
export type CallStatus = 'pending' | 'completed' | 'failed' | 'unknown';

/** What an operator said about a call whose outcome was unknown. */
export interface OperatorVerdict {
  action: 'confirm' | 'skip';
  signalId: string;
  result?: JsonValue;
}

/** One tool call as the log tells it: requested, then resolved by exactly one observation. */
export interface CallState {
  callId: string;
  step: number;
  tool: string;
  args: JsonObject;
  idempotencyKey: string;
  status: CallStatus;
  attempts: number;
  requestedSeq: number;
  /** Id of the `tool_call_requested` event: the causation of the task and of the observation. */
  intentId: string;
  resolvedSeq?: number;
  result?: JsonValue;
  error?: ErrorInfo;
  /** The tool's policy: the run fails when this call finally fails. */
  failRun?: boolean;
  operator?: OperatorVerdict;
}

export interface WaitState {
  waitId: string;
  kind: 'signal' | 'timer' | 'child' | 'operator';
  signal?: string;
  until?: string;
  childRunId?: string;
  callId?: string;
}

/** The folded state of one run. Plain JSON, so it can be stored, snapshotted and compared. */
export interface RunState {
  runId: string | null;
  status: RunStatus;
  request: (RunRequest & { runId: string }) | null;
  correlationId: string | null;
  /** Stream sequence of the last event folded in; the expected-last-sequence for the next decision. */
  lastSeq: number;
  eventCount: number;
  /** Tool calls requested so far; step numbers count from 1. */
  steps: number;
  decisions: number;
  /** The latest `thought` whose follow-up events (intents, completion) are not all in the log yet. */
  openDecision: { seq: number; decision: Decision } | null;
  calls: CallState[];
  usage: Usage;
  waiting: WaitState | null;
  signals: { signalId: string; name: string; payload?: JsonValue; seq: number }[];
  output?: JsonValue;
  error?: ErrorInfo;
  createdAt: string | null;
  updatedAt: string | null;
}

export function initialRunState(): RunState {
  return {
    runId: null,
    status: 'none',
    request: null,
    correlationId: null,
    lastSeq: 0,
    eventCount: 0,
    steps: 0,
    decisions: 0,
    openDecision: null,
    calls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    waiting: null,
    signals: [],
    createdAt: null,
    updatedAt: null,
  };
}

export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'rejected'];

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
