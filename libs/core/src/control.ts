import {
  CONTROL_TOOLS,
  ControlToolSchemas,
  formatIssues,
  isControlTool,
  RUN_REQUEST_VERSION,
  type AgentSpec,
  type RunRequest,
} from '@dura/contracts';
import { callsOfKind } from './call-kinds';
import { argsHash } from './idempotency';
import type { EventDraft } from './event-draft';
import type { CallState, RunState } from './run-state';

const MAX_RUN_ID = 128;

/** The child run of a `dura.run_agent` call: derived from the parent and the step, so a re-drive agrees. */
export function childRunIdFor(runId: string, step: number): string {
  const id = `${runId}-c${step}`;
  if (id.length <= MAX_RUN_ID) return id;
  return `${runId.slice(0, 80)}-${argsHash({ runId }).slice(0, 16)}-c${step}`;
}

function plus(iso: string | undefined, seconds: number): string {
  const from = iso === undefined ? 0 : Date.parse(iso);
  return new Date(from + seconds * 1000).toISOString();
}

/**
 * A wait `seconds` after the call's intent. Its timer is due `delayMs` after the broker stored the intent, so
 * no planner's clock moves it; the time recorded beside it is the recording planner's reading, for display.
 */
function relative<K extends 'until' | 'timeoutAt'>(
  field: K,
  call: CallState,
  seconds: number,
): Record<K, string> & { delayMs: number } {
  return { [field]: plus(call.requestedAt, seconds), delayMs: seconds * 1000 } as Record<K, string> & {
    delayMs: number;
  };
}

/**
 * The events that open the waits of calls recorded but not yet waiting: control calls (`dura.sleep`,
 * `dura.wait_for_signal`, `dura.run_agent`) and calls a human must approve first. Invalid control arguments
 * fail the call (the model sees why) instead of the run.
 */
export function openWaits(state: RunState): EventDraft[] {
  const waiting = new Set(state.waits.map((wait) => wait.callId));
  const drafts: EventDraft[] = [];
  for (const call of callsOfKind('notable', state.calls)) {
    if (call.status !== 'pending' || waiting.has(call.callId)) continue;
    const denied = deniedBy(state, call);
    if (denied) drafts.push(failed(call, 'tool_not_allowed', denied));
    else if (isControlTool(call.tool)) drafts.push(...controlWait(state, call));
    else if (call.approval && call.approval.decision === undefined) {
      const { timeoutSeconds, onTimeout } = call.approval;
      drafts.push({
        type: 'wait_requested',
        data: {
          waitId: `approval:${call.callId}`,
          kind: 'approval',
          callId: call.callId,
          signal: 'approve',
          onTimeout,
          ...(timeoutSeconds === undefined ? {} : relative('timeoutAt', call, timeoutSeconds)),
        },
      });
    }
  }
  return drafts;
}

/** Why the run's pinned agent may not make this call, if it may not. */
function deniedBy(state: RunState, call: CallState): string | undefined {
  const pinned = state.pinned;
  if (!pinned?.tools) return undefined;
  if (isControlTool(call.tool)) {
    return pinned.controlTools === false
      ? `agent ${pinned.agent} may not use the control tool ${call.tool}`
      : undefined;
  }
  if (pinned.tools.includes(call.tool)) return undefined;
  const allowed = pinned.tools.length > 0 ? pinned.tools.join(', ') : 'none';
  return `agent ${pinned.agent}@${pinned.version} may not call ${call.tool}; its tools are: ${allowed}`;
}

/** A call that fails before anything runs: recorded by the planner, seen by the model. */
function failed(call: CallState, code: string, message: string): EventDraft {
  return {
    type: 'tool_call_failed',
    data: {
      callId: call.callId,
      idempotencyKey: call.idempotencyKey,
      error: { code, message, retryable: false },
      attempt: 1,
      retryable: false,
    },
  };
}

function controlWait(state: RunState, call: CallState): EventDraft[] {
  const schema = ControlToolSchemas[call.tool as keyof typeof ControlToolSchemas];
  const parsed = schema.safeParse(call.args);
  if (!parsed.success) {
    const message = `${call.tool} arguments are invalid: ${formatIssues(parsed.error).join('; ')}`;
    return [failed(call, 'invalid_arguments', message)];
  }
  switch (call.tool) {
    case CONTROL_TOOLS.sleep: {
      const args = parsed.data as { seconds?: number; until?: string };
      const due =
        args.until !== undefined ? { until: args.until } : relative('until', call, args.seconds ?? 0);
      const data = { waitId: `sleep:${call.callId}`, kind: 'timer' as const, callId: call.callId, ...due };
      return [{ type: 'wait_requested', data }];
    }
    case CONTROL_TOOLS.waitForSignal: {
      const args = parsed.data as { name: string; timeoutSeconds?: number; approval?: true };
      const data = {
        waitId: `signal:${call.callId}`,
        kind: 'signal' as const,
        callId: call.callId,
        signal: args.name,
        ...(args.approval ? { approval: true } : {}),
        ...(args.timeoutSeconds === undefined
          ? {}
          : { ...relative('timeoutAt', call, args.timeoutSeconds), onTimeout: 'continue' as const }),
      };
      return [{ type: 'wait_requested', data }];
    }
    default: {
      const args = parsed.data as {
        agent: string | AgentSpec;
        version?: string;
        input?: RunRequest['input'];
      };
      const runId = state.runId ?? '';
      const childRunId = childRunIdFor(runId, call.step);
      const agent: AgentSpec =
        typeof args.agent === 'string'
          ? { kind: 'agent', name: args.agent, ...(args.version ? { version: args.version } : {}) }
          : args.agent;
      const request: RunRequest = {
        v: RUN_REQUEST_VERSION,
        runId: childRunId,
        agent,
        ...(args.input === undefined ? {} : { input: args.input }),
        parent: { runId, callId: call.callId },
        // A child acts for its parent, so it belongs to the parent's tenant (never one the model names).
        ...(state.request?.tenant === undefined ? {} : { tenant: state.request.tenant }),
      };
      return [
        { type: 'child_run_requested', data: { childRunId, request, callId: call.callId } },
        {
          type: 'wait_requested',
          data: { waitId: `child:${call.callId}`, kind: 'child', callId: call.callId, childRunId },
        },
      ];
    }
  }
}

/** A call the gateway runs: not a control call, and approved when it needs approval. */
export function isDispatchable(state: RunState, call: CallState): boolean {
  return (
    call.status === 'pending' &&
    !isControlTool(call.tool) &&
    (state.pinned?.tools === undefined || state.pinned.tools.includes(call.tool)) &&
    (call.approval === undefined || call.approval.decision === 'approved')
  );
}
