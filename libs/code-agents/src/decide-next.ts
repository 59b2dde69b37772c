import { DuraError, type PromptRecord, type RunEvent } from '@dura/contracts';
import { fold, type RunState } from '@dura/core';
import type { AnyCodeAgent } from './define-agent';
import type { ModelAnswer } from './model-answer';
import { Execution } from './execution';
import type { AdvanceOptions, CodeStep, Frontier } from './code-step';
import type { JournalEntry } from './journal';

/**
 * What the planner appends next for a code agent's run, by pure replay: `run` is re-executed from the start
 * against the log (events, or the state folded from them) and only the first call past the frontier acts.
 */
export function decideNext(
  agent: AnyCodeAgent,
  log: RunState | readonly RunEvent[],
  options: AdvanceOptions,
): Promise<CodeStep> {
  const state = isState(log) ? log : fold(log);
  if (state.runId === null) throw new DuraError('no_run', 'the log holds no run_requested event');
  return new Execution(agent, state.runId).advance(state, options);
}

/** A live execution the planner may keep per run (a suspended continuation), advanced as the log grows. */
export function startExecution(agent: AnyCodeAgent, runId: string): Execution {
  return new Execution(agent, runId);
}

/** The frontier to advance with once the model answered a `model` step (`prompt`: what it was sent, recorded). */
export function withModelAnswer(
  step: Extract<CodeStep, { kind: 'model' }>,
  answer: ModelAnswer,
  prompt?: PromptRecord,
): Frontier {
  const entry: JournalEntry = {
    k: 'model',
    h: step.requestHash,
    a: answer,
    ...(prompt ? { p: prompt } : {}),
  };
  const entries: JournalEntry[] = [...step.frontier.entries, entry];
  return { step: step.frontier.step, entries };
}

function isState(log: RunState | readonly RunEvent[]): log is RunState {
  return !Array.isArray(log);
}
