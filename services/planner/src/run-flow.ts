import type { CallAdmission, CallCosts } from '@dura/agents';
import type { RunState } from '@dura/core';
import type { RunRequest } from '@dura/contracts';
import type { FlowControl } from './flow-control';

/** Flow control as the run driver uses it: before each model call, and once a run has ended. */
export interface RunFlow {
  admit(input: { state: RunState; request: RunRequest & { runId: string } }): Promise<CallAdmission>;
  /**
   * The run ended: what it held (its concurrency key's slot) is given back, and a run that ended while it
   * may have waited in a rate's line (cancelled, failed) leaves it. Idempotent.
   */
  finished(state: RunState): Promise<void>;
}

/**
 * A run's concurrency key first (held from its first decision to its end), then the model limits of the
 * call it is about to make, on the call's worst case as the model estimates it.
 */
export function createRunFlow(deps: {
  flow: FlowControl;
  model: Partial<Pick<CallCosts, 'callCost'>>;
  /** Whether any model limit is declared: without one, a call's worst case is not even estimated. */
  modelLimits: boolean;
}): RunFlow {
  return {
    async admit({ state, request }) {
      const key = request.concurrency;
      if (key) {
        const entered = await deps.flow.enterKey(key.key, key.limit, request.runId);
        if (entered.kind === 'wait')
          return {
            kind: 'wait',
            until: new Date(entered.until),
            reason: `capacity of concurrency key ${key.key} (limit ${key.limit})`,
          };
      }
      const cost = deps.modelLimits ? await deps.model.callCost?.({ state, request }) : undefined;
      if (!cost) return { kind: 'go' };
      const admission = await deps.flow.admit({
        runId: request.runId,
        decision: state.decisions,
        tenant: state.tenant,
        ...(request.priority === undefined ? {} : { priority: request.priority }),
        ...cost,
      });
      if (admission.kind === 'wait')
        return { kind: 'wait', until: new Date(admission.until), reason: admission.reason };
      return { kind: 'go', settle: (used) => admission.settle(used) };
    },
    async finished(state) {
      const key = state.request?.concurrency;
      if (key && state.runId) await deps.flow.leaveKey(key.key, key.limit, state.runId);
      // A completed run made its last call: it is in no line.
      if (deps.modelLimits && state.runId && (state.status === 'cancelled' || state.status === 'failed'))
        await deps.flow.leaveLines({ runId: state.runId, decision: state.decisions, tenant: state.tenant });
    },
  };
}
