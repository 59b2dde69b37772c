import { appendFileSync } from 'node:fs';
import { DuraError, type Decision, type JsonValue, type ScriptedStep } from '@dura/contracts';
import {
  BadReference,
  callsOfKind,
  nextCallId,
  resolveReferences,
  resolveStepArgs,
  type RunState,
} from '@dura/core';
import type { PayloadAccess } from './payload-access';
import { callsOf, type PlanEntry } from './agents/definition';
import type { Model, ModelTurn } from './model';
import { withResolvedResults } from './resolved-results';

/**
 * The deterministic model: the plan comes with the run request. Step N of the plan becomes the N-th tool call,
 * with `$steps.K.field` references resolved from recorded results; after the last step it completes with the
 * plan's `output` (references resolved), or with the last step's result.
 */
export function createScriptedModel(
  options: { callLog?: (entry: ModelCall) => void; payloads?: PayloadAccess } = {},
): Model {
  return {
    decide: async ({ state, request }) => {
      const agent = request.agent;
      if (agent.kind !== 'scripted') {
        throw new DuraError(
          'wrong_model',
          `run ${request.runId} names agent ${agent.name}, not a scripted plan`,
        );
      }
      options.callLog?.({
        runId: request.runId,
        step: state.steps,
        decisions: state.decisions,
        lastSeq: state.lastSeq,
      });
      const resolved = await withResolvedResults(state, options.payloads);
      return scriptedTurn(resolved, agent.steps, agent.output, request.input);
    },
  };
}

/** One model call as the call log records it. */
export interface ModelCall {
  runId: string;
  step: number;
  decisions: number;
  lastSeq: number;
}

/** A call log that appends JSON lines to `path` (synchronously, so a SIGKILL right after loses nothing). */
export function fileCallLog(path: string): (entry: ModelCall) => void {
  return (entry) => appendFileSync(path, `${JSON.stringify(entry)}\n`);
}

export function scriptedTurn(
  state: RunState,
  plan: readonly PlanEntry[],
  output: JsonValue | undefined,
  input: JsonValue | undefined,
): ModelTurn {
  const { total } = layoutOf(plan);
  const decision = scriptedDecision(state, plan, output, input);
  const content =
    decision.kind === 'tool_calls'
      ? `${stepsText(state.steps, decision.calls.length)} of ${total}: ${decision.calls.map((c) => c.tool).join(', ')}`
      : decision.kind === 'complete'
        ? `plan finished after ${total} step${total === 1 ? '' : 's'}`
        : `plan failed: ${decision.error.message}`;
  return {
    decision,
    content,
    usage: { inputTokens: 0, outputTokens: 0 },
    model: { id: 'scripted', promptVersion: '1' },
    finishReason: decision.kind === 'tool_calls' ? 'tool_calls' : 'stop',
  };
}

function stepsText(done: number, calls: number): string {
  return calls === 1 ? `step ${done + 1}` : `steps ${done + 1}-${done + calls}`;
}

/** Where each plan entry starts (steps before it; the first entry at a position wins), and the plan's steps. */
interface PlanLayout {
  starts: ReadonlyMap<number, number>;
  total: number;
}

/** Layouts by plan: a run's plan is one object for as long as its state is, and is read at every decision. */
const layouts = new WeakMap<readonly PlanEntry[], PlanLayout>();

function layoutOf(plan: readonly PlanEntry[]): PlanLayout {
  let layout = layouts.get(plan);
  if (!layout) {
    const starts = new Map<number, number>();
    let position = 0;
    plan.forEach((entry, i) => {
      if (!starts.has(position)) starts.set(position, i);
      position += callsOf(entry).length;
    });
    layout = { starts, total: position };
    layouts.set(plan, layout);
  }
  return layout;
}

/** The calls the plan makes once `done` steps are recorded, or undefined after its last decision. */
function nextCalls(plan: readonly PlanEntry[], done: number): readonly ScriptedStep[] | undefined {
  const { starts, total } = layoutOf(plan);
  const at = starts.get(done);
  if (at !== undefined) return callsOf(plan[at] as PlanEntry);
  if (done >= total) return undefined;
  // Inside a parallel group: name its steps.
  let position = 0;
  for (const entry of plan) {
    const end = position + callsOf(entry).length;
    if (end > done)
      throw new DuraError(
        'plan_mismatch',
        `the run recorded ${done} steps, which ends inside a parallel group of its plan (steps ${position + 1}-${end})`,
      );
    position = end;
  }
  return undefined;
}

/**
 * Recorded results by step, as plan references read them: calls are recorded in step order (step N is the
 * N-th call), so a step's result is read where it is, not from a map of every call built per decision.
 */
function resultsOf(calls: RunState['calls']): Pick<ReadonlyMap<number, JsonValue>, 'get'> {
  return {
    get: (step) => {
      const call = calls[step - 1]?.step === step ? calls[step - 1] : calls.find((c) => c.step === step);
      return call === undefined ? undefined : (call.result ?? null);
    },
  };
}

function scriptedDecision(
  state: RunState,
  plan: readonly PlanEntry[],
  output: JsonValue | undefined,
  input: JsonValue | undefined,
): Decision {
  const [failed] = callsOfKind('failed', state.calls);
  if (failed) {
    return {
      kind: 'fail',
      error: {
        code: 'tool_failed',
        message: `step ${failed.step} (${failed.tool}) failed: ${failed.error?.message ?? 'unknown error'}`,
      },
    };
  }
  const results = resultsOf(state.calls);
  const scope = { results, input };
  try {
    const next = nextCalls(plan, state.steps);
    if (next) {
      const calls = next.map((step, index) => ({
        callId: nextCallId(state, index),
        tool: step.tool,
        args: resolveStepArgs(step, scope),
      }));
      return { kind: 'tool_calls', calls };
    }
    const final = output === undefined ? results.get(state.steps) : resolveReferences(output, scope);
    return final === undefined ? { kind: 'complete' } : { kind: 'complete', output: final };
  } catch (err) {
    if (err instanceof BadReference) return { kind: 'fail', error: { code: err.code, message: err.message } };
    throw err;
  }
}
