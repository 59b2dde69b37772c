import { DuraError, type JsonValue } from '@dura/contracts';
import { TERMINAL_STATUSES, verdictSignal, verdictWaits } from '@dura/core';
import { waitStep, type WaitDescription } from './next-step';

/** The code of the refusal when a run has no wait that a verdict answers. */
export const NO_VERDICT_WAIT = 'approval_wait_not_found';

/** What `approve` or `reject` sends: the signal, its payload, and the wait it answers. */
export interface VerdictToSend {
  name: string;
  payload: { [key: string]: JsonValue };
  wait: WaitDescription;
}

/** What `verdictFor` reads of a run: the fold (`RunState`), or the read API's view of it. */
export interface VerdictRun {
  runId: string | null;
  status: string;
  waits: readonly WaitDescription[];
  waiting: WaitDescription | null;
}

/**
 * The signal that answers the run's wait for a verdict (the wait of `callId`, else the oldest): a call
 * awaiting approval or a `ctx.approve` wait. Throws `approval_wait_not_found` naming what the run waits for
 * and the command that answers it when no such wait is open: sending anyway would change nothing.
 */
export function verdictFor(
  state: VerdictRun,
  verdict: { approved: boolean; reason?: string | undefined },
  options: { callId?: string | undefined; dura?: string } = {},
): VerdictToSend {
  const runId = state.runId ?? '?';
  const dura = options.dura ?? 'dura';
  const open = verdictWaits(state.waits);
  const wait = open.find((w) => options.callId === undefined || w.callId === options.callId);
  if (wait) return { ...verdictSignal(wait, verdict), wait };
  if ((TERMINAL_STATUSES as readonly string[]).includes(state.status))
    throw new DuraError(NO_VERDICT_WAIT, `run ${runId} is ${state.status}: it waits for no approval`);
  const [first] = open;
  if (first)
    throw new DuraError(
      NO_VERDICT_WAIT,
      `run ${runId} has no approval wait for call ${options.callId ?? '?'}; ` +
        (waitStep(runId, first, dura) ?? `it waits for approval of ${first.callId ?? 'a call'}`),
    );
  const step = state.waiting ? waitStep(runId, state.waiting, dura) : undefined;
  throw new DuraError(
    NO_VERDICT_WAIT,
    step
      ? `run ${runId} waits for no approval; ${step}`
      : `run ${runId} waits for no approval (it is ${state.status}); ${dura} get ${runId} shows where it is`,
  );
}
