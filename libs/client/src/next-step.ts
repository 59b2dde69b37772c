import type { RunEvent } from '@dura/contracts';

/**
 * What resolves the wait an event opens, as commands to copy; undefined when the event opens no wait a person
 * can act on. `dura` stands for however the CLI is run (`npm run dura --` in the repository).
 */
export function nextStep(event: RunEvent, dura = 'dura'): string | undefined {
  const runId = event.meta.runId;
  if (event.type === 'budget_exceeded' && event.data.policy === 'wait')
    return (
      `run ${runId} is over its ${event.data.budget} budget (${event.data.used} of ${event.data.limit}) and waits: ` +
      `raise it with  ${dura} signal ${runId} raise_budget --payload '${raiseBudgetPayload(event.data.budget, event.data.limit)}'` +
      `  or stop it with  ${dura} cancel ${runId}`
    );
  // After budget_exceeded (which names the limit), the budget wait itself adds nothing.
  if (event.type !== 'wait_requested' || event.data.kind === 'budget') return undefined;
  return waitStep(runId, event.data, dura);
}

/** The fields of a wait that say what resolves it (a `wait_requested` event's data, or `RunState.waiting`). */
export interface WaitDescription {
  kind: 'signal' | 'timer' | 'child' | 'operator' | 'approval' | 'budget';
  signal?: string | undefined;
  until?: string | undefined;
  childRunId?: string | undefined;
  callId?: string | undefined;
  timeoutAt?: string | undefined;
  onTimeout?: string | undefined;
  reason?: string | undefined;
  /** A signal wait for a person's verdict (`ctx.approve`). */
  approval?: boolean | undefined;
}

/** What resolves the run's wait, as commands to copy (undefined for a budget wait: see `nextStep`). */
export function waitStep(runId: string, wait: WaitDescription, dura = 'dura'): string | undefined {
  const timeout = wait.timeoutAt ? ` (until ${wait.timeoutAt}, then ${wait.onTimeout ?? 'fail'})` : '';
  switch (wait.kind) {
    case 'approval': {
      const call = wait.callId ? ` --call ${wait.callId}` : '';
      return (
        `run ${runId} waits for approval of ${wait.callId ?? 'a call'}${timeout}: ` +
        `${dura} approve ${runId}${call}  or  ${dura} reject ${runId}${call} --reason TEXT`
      );
    }
    case 'signal': {
      if (!wait.approval)
        return `run ${runId} waits for the signal ${wait.signal ?? '?'}${timeout}: ${dura} signal ${runId} ${wait.signal ?? 'NAME'} --payload '{}'`;
      const call = wait.callId ? ` --call ${wait.callId}` : '';
      return (
        `run ${runId} waits for a verdict (signal ${wait.signal ?? '?'})${timeout}: ` +
        `${dura} approve ${runId}${call}  or  ${dura} reject ${runId}${call} --reason TEXT ` +
        `(or ${dura} signal ${runId} ${wait.signal ?? 'NAME'} --payload '{"approved":true}'; any other payload refuses)`
      );
    }
    case 'budget':
      return (
        `run ${runId} waits for more budget: ${dura} signal ${runId} raise_budget --payload '{"maxSteps":N}' ` +
        `(or maxTokens, maxCostUsd, maxWallSeconds)  or  ${dura} cancel ${runId}`
      );
    case 'operator': {
      if (wait.callId === undefined) return codeStopStep(runId, wait.reason, dura);
      const callId = wait.callId;
      const why = wait.reason ? `: ${wait.reason}` : ` on the interrupted call ${callId}`;
      return (
        `run ${runId} waits for an operator${why}. Settle it with ` +
        `${dura} signal ${runId} confirm --payload '{"callId":"${callId}","result":RESULT}'  or  ` +
        `${dura} signal ${runId} skip --payload '{"callId":"${callId}"}'`
      );
    }
    case 'timer':
      return `run ${runId} sleeps until ${wait.until ?? '?'}; nothing to do (${dura} cancel ${runId} stops it)`;
    case 'child':
      return `run ${runId} waits for its child run ${wait.childRunId ?? '?'}: ${dura} watch ${wait.childRunId ?? 'CHILD_ID'}`;
  }
}

/**
 * A code agent's run stopped (non-determinism, or code not driven by ctx): no call is in doubt, so `confirm`
 * and `skip` answer nothing; `retry` decides again with the code served now.
 */
function codeStopStep(runId: string, reason: string | undefined, dura: string): string {
  return (
    `run ${runId} is stopped for an operator${reason ? `: ${reason}` : ''}. Serve code that agrees with the ` +
    `log (the version the run started with, or a fix) and  ${dura} signal ${runId} retry  ` +
    `(it stops again if the code still differs), or  ${dura} cancel ${runId}  or  ${dura} fork ${runId} --at SEQ`
  );
}

const LIMIT_FIELD = {
  steps: 'maxSteps',
  tokens: 'maxTokens',
  cost: 'maxCostUsd',
  time: 'maxWallSeconds',
} as const;

function raiseBudgetPayload(budget: keyof typeof LIMIT_FIELD, limit: number): string {
  return JSON.stringify({ [LIMIT_FIELD[budget]]: limit * 2 });
}
