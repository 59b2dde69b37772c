import { CONTROL_TOOLS, type RunEventOf } from '@dura/contracts';
import { indexOfCall } from './call-list';
import { completeCall, failCall, settleCall } from './evolve-calls';
import { withoutWait } from './evolve-waits';
import { isTerminal, type RunState } from './run-state';

/**
 * A child run requested: its id is new in this run, and the `dura.run_agent` call it serves (when named) is
 * pending and has no child yet. While the run waits (an earlier child of the same decision already opened its
 * wait) the request must name its call, so a child is only ever started for a recorded call.
 */
export function onChildRequested(
  state: RunState,
  event: RunEventOf<'child_run_requested'>,
  reject: (reason: string) => never,
): RunState {
  const { childRunId, callId } = event.data;
  if (state.children.some((child) => child.childRunId === childRunId))
    reject(`child run ${childRunId} was already requested`);
  if (callId === undefined) {
    if (state.status === 'waiting')
      reject('a child run requested while the run waits must name the dura.run_agent call it serves');
  } else {
    const call = state.calls[indexOfCall(state.calls, callId)];
    if (!call) reject(`call ${callId} was never requested`);
    else if (call.tool !== CONTROL_TOOLS.runAgent)
      reject(`call ${callId} is a ${call.tool} call, not ${CONTROL_TOOLS.runAgent}`);
    else if (call.status !== 'pending') reject(`call ${callId} is already ${call.status}`);
    if (state.children.some((child) => child.callId === callId))
      reject(`call ${callId} already has a child run`);
  }
  return {
    ...state,
    children: [
      ...state.children,
      {
        childRunId,
        callId: callId ?? '',
        request: { ...event.data.request, runId: childRunId },
        status: 'running',
      },
    ],
  };
}

export function onChildCompleted(state: RunState, event: RunEventOf<'child_run_completed'>): RunState {
  const { childRunId, status, output } = event.data;
  const children = state.children.map((child) =>
    child.childRunId === childRunId && child.status === 'running' ? { ...child, status } : child,
  );
  const withChildren = { ...state, children };
  if (isTerminal(state.status)) return withChildren;
  const wait = state.waits.find((w) => w.kind === 'child' && w.childRunId === childRunId);
  if (!wait) return withChildren;
  const update =
    status === 'completed'
      ? completeCall(event.seq, { status, ...(output === undefined ? {} : { output }) })
      : failCall(event.seq, `child_run_${status}`, `child run ${childRunId} ${status}`);
  return withoutWait(settleCall(withChildren, wait.callId, update), wait.waitId);
}
