// A run's log in memory with the planner's own step (the real decider and `plannerStep`), where a test can
// take a replica's decision without recording it (it lost the append race) and record other events first.
import type { RunEvent, RunRequest } from '@dura/contracts';
import { evolve, initialRunState, isTerminal, nextAction, type EventDraft, type RunState } from '@dura/core';
import { runEvent } from '@dura/core/testing';
import { plannerStep, type PlannerModel } from '../src/index';

export class CodeRunLog {
  readonly events: RunEvent[] = [];
  state: RunState = initialRunState();

  constructor(readonly request: RunRequest & { runId: string }) {
    this.add({ type: 'run_requested', data: { request } });
  }

  add(draft: EventDraft): void {
    const event = runEvent(draft.type, draft.data as never, {
      seq: this.events.length + 1,
      runId: this.request.runId,
    }) as RunEvent;
    this.events.push(event);
    this.state = evolve(this.state, event);
  }

  /** Step numbers of the recorded decisions that asked for tool calls. */
  get turns(): number {
    return this.state.turns.length;
  }

  /**
   * What `model`'s replica would append next (nothing recorded); tool calls the log asks for are completed
   * on the spot, as the gateway would. `idle`: the run waits or is finished (the driver tells the model).
   */
  async proposal(model: PlannerModel): Promise<EventDraft[] | 'idle'> {
    for (;;) {
      const action = nextAction(this.state);
      if (action.kind === 'idle') {
        if (isTerminal(this.state.status)) model.finished?.(this.request.runId);
        return 'idle';
      }
      if (action.kind !== 'dispatch') {
        const step = await plannerStep(this.state, action, { model, now: new Date() });
        return step.kind === 'none' ? 'idle' : step.drafts;
      }
      for (const call of action.calls)
        this.add({
          type: 'tool_call_completed',
          data: {
            callId: call.callId,
            idempotencyKey: call.idempotencyKey,
            result: { echoed: call.args },
            attempt: 1,
            deduped: false,
            durationMs: 1,
          },
        });
    }
  }

  /** Records what leads up to `model`'s next decision and returns that decision's events, unrecorded. */
  async nextDecision(model: PlannerModel): Promise<EventDraft[]> {
    for (;;) {
      const drafts = await this.proposal(model);
      if (drafts === 'idle') throw new Error(`run ${this.request.runId} has no decision to take`);
      if (drafts.some((draft) => draft.type === 'thought')) return drafts;
      drafts.forEach((draft) => this.add(draft));
    }
  }

  /** Drives the run with `model` until it waits or ends, or until `turns` decisions asked for calls. */
  async drive(model: PlannerModel, turns = Infinity): Promise<RunState> {
    while (this.turns < turns) {
      const drafts = await this.proposal(model);
      if (drafts === 'idle') break;
      drafts.forEach((draft) => this.add(draft));
    }
    return this.state;
  }
}

export function agentRequest(runId: string, name: string): RunRequest & { runId: string } {
  return { v: 1, runId, agent: { kind: 'agent', name } };
}
