import { appendFileSync } from 'node:fs';
import { DuraError, type Decision, type JsonValue } from '@dura/contracts';
import { BadReference, nextCallId, resolveReferences, resolveStepArgs, type RunState } from '@dura/core';
import type { PayloadAccess } from './agents/agent-model';
import type { Model, ModelTurn } from './model';
import { withResolvedResults } from './payload-access';

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
  steps: readonly { tool: string; args: Record<string, JsonValue> }[],
  output: JsonValue | undefined,
  input: JsonValue | undefined,
): ModelTurn {
  const decision = scriptedDecision(state, steps, output, input);
  const content =
    decision.kind === 'tool_calls'
      ? `step ${state.steps + 1} of ${steps.length}: ${decision.calls.map((c) => c.tool).join(', ')}`
      : decision.kind === 'complete'
        ? `plan finished after ${steps.length} steps`
        : `plan failed: ${decision.error.message}`;
  return {
    decision,
    content,
    usage: { inputTokens: 0, outputTokens: 0 },
    model: { id: 'scripted', promptVersion: '1' },
    finishReason: decision.kind === 'tool_calls' ? 'tool_calls' : 'stop',
  };
}

function scriptedDecision(
  state: RunState,
  steps: readonly { tool: string; args: Record<string, JsonValue> }[],
  output: JsonValue | undefined,
  input: JsonValue | undefined,
): Decision {
  const failed = state.calls.find((call) => call.status === 'failed');
  if (failed) {
    return {
      kind: 'fail',
      error: {
        code: 'tool_failed',
        message: `step ${failed.step} (${failed.tool}) failed: ${failed.error?.message ?? 'unknown error'}`,
      },
    };
  }
  const results = new Map(state.calls.map((call) => [call.step, call.result ?? null] as const));
  const scope = { results, input };
  try {
    const next = steps[state.steps];
    if (next) {
      const args = resolveStepArgs(next, scope);
      return { kind: 'tool_calls', calls: [{ callId: nextCallId(state, 0), tool: next.tool, args }] };
    }
    const final = output === undefined ? results.get(state.steps) : resolveReferences(output, scope);
    return final === undefined ? { kind: 'complete' } : { kind: 'complete', output: final };
  } catch (err) {
    if (err instanceof BadReference) return { kind: 'fail', error: { code: err.code, message: err.message } };
    throw err;
  }
}
