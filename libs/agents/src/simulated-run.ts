// An in-memory planner for replay tests: the real decider and a model, with tool results made up by the
// test, writing the log exactly as the planner and the gateway would (minus the I/O).
import type { JsonValue, LiveText, RunEvent, RunRequest, ScriptedStep } from '@dura/contracts';
import { evolve, initialRunState, nextAction, type EventDraft, type RunState } from '@dura/core';
import { runEvent } from '@dura/core/testing';
import type { PlannerModel } from './model';
import { plannerStep, type PlannerStepPorts } from './planner-step';

export interface SimulatedRun {
  events: RunEvent[];
  state: RunState;
}

export function scriptedRequest(runId: string, steps: ScriptedStep[]): RunRequest & { runId: string } {
  return { v: 1, runId, agent: { kind: 'scripted', steps } };
}

/** `count` steps of pay.charge, each charging (step × 100). */
export function chargeSteps(count: number): ScriptedStep[] {
  return Array.from({ length: count }, (_, i) => ({ tool: 'pay.charge', args: { amount: (i + 1) * 100 } }));
}

/**
 * Drives a run in memory until it ends or `until` says stop: `result(step)` answers each call, and
 * `before(state)` may return input events (signals) to record before the planner's next append.
 */
export async function simulateRun(
  request: RunRequest & { runId: string },
  model: PlannerModel,
  options: {
    result?: (step: number) => JsonValue;
    before?: (state: RunState) => EventDraft[];
    start?: RunEvent[];
    firstSeq?: number;
    maxEvents?: number;
    /** Seals secret arguments of each thought, as the planner does (`sealDecision`). */
    seal?: PlannerStepPorts['seal'];
    /** Receives the text of model answers as they stream, as the driver's live tokens do. */
    live?: LiveText;
    /** Flow control, asked before each model call as the driver asks it (default: every call goes). */
    admit?: PlannerStepPorts['admit'];
  } = {},
): Promise<SimulatedRun> {
  const runId = request.runId;
  const events: RunEvent[] = [...(options.start ?? [])];
  let state = events.reduce(evolve, initialRunState());
  let seq = events.at(-1)?.seq ?? (options.firstSeq ?? 1) - 1;
  const add = (draft: EventDraft): void => {
    // Other runs share the stream: sequences jump by 2.
    seq += 2;
    const event = runEvent(draft.type, draft.data as never, { seq, runId }) as RunEvent;
    events.push(event);
    state = evolve(state, event);
  };
  if (events.length === 0) add({ type: 'run_requested', data: { request } });
  for (let guard = 0; guard < (options.maxEvents ?? 500); guard += 1) {
    for (const input of options.before?.(state) ?? []) add(input);
    const action = nextAction(state);
    switch (action.kind) {
      case 'idle':
        return { events, state };
      case 'dispatch':
        for (const call of action.calls) {
          const data = {
            callId: call.callId,
            idempotencyKey: call.idempotencyKey,
            result: options.result?.(call.step) ?? { chargeId: `ch_${call.step}` },
            attempt: 1,
            deduped: false,
            durationMs: 3,
          };
          add({ type: 'tool_call_completed', data });
        }
        break;
      default: {
        // The planner's own step: the same events the run driver appends.
        const seal = options.seal ? { seal: options.seal } : {};
        const live = options.live ? { live: options.live } : {};
        const admit = options.admit ? { admit: options.admit } : {};
        const step = await plannerStep(state, action, { model, now: new Date(), ...seal, ...live, ...admit });
        if (step.kind !== 'none') step.drafts.forEach(add);
        break;
      }
    }
  }
  throw new Error(`the simulated run ${runId} did not end within ${options.maxEvents ?? 500} events`);
}
