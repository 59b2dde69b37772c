import { DEFAULT_TENANT, type ErrorInfo } from '@dura/contracts';
import { isTerminal, type RunState } from '@dura/core';

/** The columns of a `runs` row besides the state itself: all of them functions of the folded state. */
export interface RunColumns {
  runId: string;
  tenant: string;
  status: string;
  lastSeq: number;
  eventCount: number;
  steps: number;
  pendingCalls: number;
  lastError?: { code: string; message: string };
  inputTokens: number;
  outputTokens: number;
  tags: string[];
  metadata: Record<string, string>;
  tools: string[];
  createdAt: string;
  updatedAt: string;
}

/**
 * What a run list shows and filters on, read off the fold. `lastError` is the run's error when it failed or
 * was rejected, else the error of its latest tool call that is still failed, unknown or being retried.
 */
export function summarize(runId: string, state: RunState): RunColumns {
  const tools = new Set<string>();
  let pendingCalls = 0;
  let callError: ErrorInfo | undefined;
  const ended = isTerminal(state.status);
  for (const call of state.calls) {
    tools.add(call.tool);
    // A run that ended waits for nothing: its unanswered calls are moot, not pending.
    if (!ended && (call.status === 'pending' || call.status === 'unknown')) pendingCalls += 1;
    if (call.status !== 'completed' && call.error) callError = call.error;
  }
  const error = state.error ?? callError;
  // A run row exists only once an event applied, and the first one (requested or rejected) sets both times.
  const updatedAt = state.updatedAt ?? '';
  return {
    runId,
    // A state stored before tenants existed has none: those runs belong to the default tenant.
    tenant: state.tenant ?? DEFAULT_TENANT,
    status: state.status,
    lastSeq: state.lastSeq,
    eventCount: state.eventCount,
    steps: state.steps,
    pendingCalls,
    ...(error ? { lastError: { code: error.code, message: error.message } } : {}),
    inputTokens: state.usage.inputTokens,
    outputTokens: state.usage.outputTokens,
    tags: [...new Set(state.request?.tags ?? [])],
    metadata: state.request?.metadata ?? {},
    tools: [...tools].sort(),
    createdAt: state.createdAt ?? updatedAt,
    updatedAt,
  };
}

/**
 * `scripted`, or `name@version` (the pinned version, else the requested one); `-` for a refused request. The run list computes the same
 * from the stored state in SQL (list-runs.ts), which needs no column of its own.
 */
export function agentLabel(state: RunState): string {
  const agent = state.request?.agent;
  if (agent?.kind === 'scripted') return 'scripted';
  const name = state.pinned?.agent ?? agent?.name ?? '-';
  const version = state.pinned?.version ?? agent?.version;
  return version === undefined ? name : `${name}@${version}`;
}
