import { DEFAULT_TENANT } from '@dura/contracts';
import type {
  ApprovalPolicy,
  BudgetLimits,
  Decision,
  ErrorInfo,
  JsonObject,
  JsonValue,
  PayloadRef,
  PinnedVersion,
  ConcurrencyKey,
  RunRequest,
  Usage,
} from '@dura/contracts';

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
  /**
   * When the intent was recorded by its planner's clock (its event's `ts`): a relative wait's recorded `until`
   * counts from here; its timer counts from the broker's time of the intent (`requestedSeq`).
   */
  requestedAt?: string;
  argsRef?: PayloadRef;
  resultRef?: PayloadRef;
  /** Present when a human must approve the call first; `decision` is what they (or the timeout) said. */
  approval?: ApprovalPolicy & { decision?: 'approved' | 'rejected' };
}

export interface WaitState {
  waitId: string;
  kind: 'signal' | 'timer' | 'child' | 'operator' | 'approval' | 'budget';
  signal?: string;
  until?: string;
  childRunId?: string;
  callId?: string;
  timeoutAt?: string;
  onTimeout?: 'reject' | 'approve' | 'fail' | 'continue';
  /** A relative wait: due this long after the broker stored the intent of `callId` (`until` is an estimate). */
  delayMs?: number;
  /** Why an operator wait was opened (a code agent's non-determinism names both calls). */
  reason?: string;
  /** A signal wait for a person's verdict (`ctx.approve`): only `{ approved: true }` approves. */
  approval?: boolean;
}

/** Budgets in force and what has been spent and reserved against them; all of it from the log. */
export interface BudgetState {
  limits: BudgetLimits;
  policy: 'fail' | 'wait';
  /** The reservation of the model call under way (appended before the call), settled by its thought. */
  reserved: { tokens: number; costUsd: number } | null;
  costUsd: number;
  startedAt: string | null;
}

export interface TurnState {
  content?: string;
  callIds: string[];
}

export interface PromptState {
  hash: string;
  /** How many turns that input covered, and under which summary. */
  turns: number;
  summaryThrough: number | null;
}

export interface ChildRunState {
  childRunId: string;
  callId: string;
  /** What the parent submits (again, harmlessly: the child's id is its submit key) until the child reports. */
  request: RunRequest & { runId: string };
  status: 'running' | 'completed' | 'failed' | 'cancelled';
}

/** The folded state of one run. Plain JSON, so it can be stored, snapshotted and compared. */
export interface RunState {
  runId: string | null;
  status: RunStatus;
  request: (RunRequest & { runId: string }) | null;
  /** Who the run belongs to: the request's tenant, else `DEFAULT_TENANT` (also for logs older than tenants). */
  tenant: string;
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
  /** The first open wait, or null; `waits` lists all of them (parallel calls may wait side by side). */
  waiting: WaitState | null;
  waits: WaitState[];
  /** What the run was started under: replicas decide only runs of a version they serve. */
  pinned: PinnedVersion | null;
  /**
   * The concurrency key the agent's definition gave the run at `run_started` (filled from its input then);
   * absent when it has none. `concurrencyKeyOf` says which key the run holds.
   */
  concurrency?: ConcurrencyKey;
  budget: BudgetState;
  /** One entry per decision that asked for tool calls: what the model said, and the calls it made. */
  turns: TurnState[];
  /** The last recorded model input: the next call records only what came after it. */
  prompt: PromptState | null;
  /** The latest recorded summary of older steps, which later model inputs use instead of them. */
  summary: { throughStep: number; text: string } | null;
  children: ChildRunState[];
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
    tenant: DEFAULT_TENANT,
    correlationId: null,
    lastSeq: 0,
    eventCount: 0,
    steps: 0,
    decisions: 0,
    openDecision: null,
    calls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    waiting: null,
    waits: [],
    pinned: null,
    budget: { limits: {}, policy: 'fail', reserved: null, costUsd: 0, startedAt: null },
    turns: [],
    prompt: null,
    summary: null,
    children: [],
    signals: [],
    createdAt: null,
    updatedAt: null,
  };
}

export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'rejected'];

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/**
 * The concurrency key a run holds while it takes steps: its request's (which wins), else the one its agent's
 * definition gave it at `run_started`; undefined when it has none.
 */
export function concurrencyKeyOf(state: RunState): ConcurrencyKey | undefined {
  return state.request?.concurrency ?? state.concurrency;
}
