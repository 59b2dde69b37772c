import { keyWaitReason, type AdmitInput, type CallAdmission, type CallCosts } from '@dura/agents';
import { concurrencyKeyOf, type RunState } from '@dura/core';
import type { RunRequest } from '@dura/contracts';
import type { FlowControl } from './flow-control';

/** Flow control as the run driver uses it: at each decision, before each model call, and once a run has ended. */
export interface RunFlow {
  /** The run's concurrency key, held from its first decision to its end (renewed at each): go, or wait. */
  hold(input: { state: RunState; request: RunRequest & { runId: string } }): Promise<CallAdmission>;
  admit(input: AdmitInput): Promise<CallAdmission>;
  /**
   * The run ended: what it held (its concurrency key's slot) is given back, and a run that ended while it
   * may have waited in a rate's line (cancelled, failed) leaves it. Idempotent.
   */
  finished(state: RunState): Promise<void>;
}

/**
 * A run's concurrency key (the request's, else its agent's, recorded in `run_started`), held from its first
 * decision to its end; then the model limits of each call it is about to make, on the call's worst case: a
 * code agent's call brings its own (`cost`, and its place in the step, `call`), a JSON agent's is estimated
 * by the model. Runs waiting for a key or a slot go by priority, then by their tenants' shares.
 */
export function createRunFlow(deps: {
  flow: FlowControl;
  model: Partial<Pick<CallCosts, 'callCost'>>;
  /** Whether any model limit is declared: without one, a call's worst case is not even estimated. */
  modelLimits: boolean;
}): RunFlow {
  return {
    async hold({ state, request }) {
      const key = concurrencyKeyOf(state);
      if (!key) return { kind: 'go' };
      const entered = await deps.flow.enterKey(key.key, key.limit, request.runId, {
        tenant: state.tenant,
        ...(request.priority === undefined ? {} : { priority: request.priority }),
      });
      if (entered.kind === 'go') return { kind: 'go' };
      return { kind: 'wait', until: new Date(entered.until), reason: keyWaitReason(key) };
    },
    async admit({ state, request, cost: given, call }) {
      const cost = deps.modelLimits
        ? (given ?? (await deps.model.callCost?.({ state, request })))
        : undefined;
      if (!cost) return { kind: 'go' };
      const admission = await deps.flow.admit({
        runId: request.runId,
        decision: state.decisions,
        ...(call ? { call } : {}),
        tenant: state.tenant,
        ...(request.priority === undefined ? {} : { priority: request.priority }),
        ...cost,
      });
      if (admission.kind === 'wait')
        return { kind: 'wait', until: new Date(admission.until), reason: admission.reason };
      return { kind: 'go', settle: (used) => admission.settle(used) };
    },
    async finished(state) {
      const key = concurrencyKeyOf(state);
      if (key && state.runId) await deps.flow.leaveKey(key.key, key.limit, state.runId);
      // A completed run made its last call: it is in no line.
      if (deps.modelLimits && state.runId && (state.status === 'cancelled' || state.status === 'failed'))
        await deps.flow.leaveLines({ runId: state.runId, decision: state.decisions, tenant: state.tenant });
    },
  };
}
