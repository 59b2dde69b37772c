import { type AnyCodeAgent } from '@dura/code-agents';
import { startExecution, type AdvanceOptions, type CodeStep, type Execution } from '@dura/code-agents/engine';
import { DuraError } from '@dura/contracts';
import { LruCache, type RunState } from '@dura/core';

/** Live executions kept by default: a few MB of suspended continuations at most for typical agents. */
export const DEFAULT_CODE_CONTINUATIONS = 1000;
/** An execution nobody advanced for this long is dropped (its run waits long, finished elsewhere, or is gone). */
export const DEFAULT_CONTINUATION_IDLE_MS = 10 * 60_000;

export interface CodeContinuationOptions {
  /** Runs whose live execution is kept (least recently used dropped first); 0 keeps none. */
  max?: number;
  /** An execution not advanced for this long is dropped at the next use of the cache. */
  idleMs?: number;
  /** Milliseconds, for the idle rule (tests move it). */
  now?: () => number;
}

/**
 * What a kept execution expects of the log when it is next advanced:
 * - `grown`: it consumed only recorded facts (it waits on recorded calls), so any longer log is fine;
 * - `same`: it is inside an unrecorded step (its model call not asked yet, or answered, the step not
 *   decided): no decision recorded since, by anyone (a `budget_reserved` for its call may be). Once it holds
 *   answers (`seq`), the log must not have moved at all: a step stopped by a budget (`budget_exceeded`, a
 *   wait for `raise_budget`) is decided again from the start, checking each of its calls against the
 *   budget as any replica and replay do, instead of going on from its second call;
 * - `recorded`: it returned this step for position `turns`; that exact step must be what the log holds
 *   there, else another decision won the append and the values this execution consumed are not the log's.
 */
type Expectation =
  | { kind: 'grown' }
  | { kind: 'same'; seq?: number }
  | { kind: 'recorded'; content?: string; callIds: string[] };

interface Kept {
  agent: AnyCodeAgent;
  execution: Execution;
  /** `state.turns.length` and `state.decisions` when it last advanced. */
  turns: number;
  decisions: number;
  expects: Expectation;
  usedAt: number;
}

/** How often a decision reused a kept execution (`warm`) or replayed the run's code from the start (`cold`). */
export interface ContinuationStats {
  warm: number;
  cold: number;
}

/**
 * The planner's suspended continuations of code-agent runs: a bounded, least-recently-used map from run to
 * its live execution, so the usual step resumes the code where it stopped instead of re-running it from the
 * start. An execution is reused only when the log grew the way it expects; otherwise (a lost append race,
 * a stale read, another pinned version, an execution that finished, blocked or threw) it is dropped and the
 * step replays cold, which is always correct. Losing an entry costs a replay, never a fact.
 */
export interface CodeContinuations {
  /** What `agent`'s code does next in `state`, like `decideNext`, resuming a kept execution when it is safe. */
  advance(agent: AnyCodeAgent, state: RunState, options: AdvanceOptions): Promise<CodeStep>;
  /** Forgets the run's execution (it finished, or its state is no longer trusted). */
  drop(runId: string): void;
  readonly size: number;
  readonly stats: Readonly<ContinuationStats>;
}

export function createCodeContinuations(options: CodeContinuationOptions = {}): CodeContinuations {
  const max = options.max ?? DEFAULT_CODE_CONTINUATIONS;
  const idleMs = options.idleMs ?? DEFAULT_CONTINUATION_IDLE_MS;
  const now = options.now ?? Date.now;
  // The least recently used go first when it is full; `sweep` drops the idle ones.
  const kept = new LruCache<string, Kept>(max);
  const stats: ContinuationStats = { warm: 0, cold: 0 };

  function sweep(at: number): void {
    for (const [runId, entry] of kept.entries()) {
      if (at - entry.usedAt < idleMs) break;
      kept.delete(runId);
    }
  }

  /** The run's kept execution if the log moved only as it expects; it leaves the map while in use. */
  function take(runId: string, agent: AnyCodeAgent, state: RunState): Execution | undefined {
    const entry = kept.get(runId);
    if (!entry) return undefined;
    kept.delete(runId);
    return entry.agent === agent && follows(entry, state) ? entry.execution : undefined;
  }

  function keep(runId: string, agent: AnyCodeAgent, execution: Execution, state: RunState, step: CodeStep) {
    const expects = expectationAfter(step, state);
    if (!expects || max === 0) return;
    const at = { turns: state.turns.length, decisions: state.decisions };
    kept.set(runId, { agent, execution, ...at, expects, usedAt: now() });
    sweep(now());
  }

  return {
    async advance(agent, state, advanceOptions) {
      const runId = state.runId;
      if (runId === null) throw new DuraError('no_run', 'the log holds no run_requested event');
      sweep(now());
      const warm = take(runId, agent, state);
      if (warm) {
        try {
          const step = await warm.advance(state, advanceOptions);
          stats.warm += 1;
          keep(runId, agent, warm, state, step);
          return step;
        } catch {
          // An execution that cannot go on is no reason to fail the decision: the cold replay decides it.
        }
      }
      stats.cold += 1;
      const execution = startExecution(agent, runId);
      const step = await execution.advance(state, advanceOptions);
      keep(runId, agent, execution, state, step);
      return step;
    },
    drop(runId) {
      kept.delete(runId);
    },
    get size() {
      return kept.size;
    },
    stats,
  };
}

/** Whether `state` is the log `entry` last saw, grown only in the way it expects. */
function follows(entry: Kept, state: RunState): boolean {
  const turns = state.turns.length;
  switch (entry.expects.kind) {
    case 'grown':
      return turns >= entry.turns;
    case 'same':
      if (entry.expects.seq !== undefined) return state.lastSeq === entry.expects.seq;
      return turns === entry.turns && state.decisions === entry.decisions;
    case 'recorded': {
      const recorded = state.turns[entry.turns];
      if (!recorded) return false;
      const { content, callIds } = entry.expects;
      return (
        recorded.content === content &&
        recorded.callIds.length === callIds.length &&
        recorded.callIds.every((id, i) => id === callIds[i])
      );
    }
  }
}

/** What a kept execution expects next after returning `step`; undefined: it must not be kept. */
function expectationAfter(step: CodeStep, state: RunState): Expectation | undefined {
  switch (step.kind) {
    case 'suspended':
      return { kind: 'grown' };
    case 'model':
      return step.frontier.entries.some((entry) => entry.k === 'model')
        ? { kind: 'same', seq: state.lastSeq }
        : { kind: 'same' };
    case 'blocked':
      return undefined;
    case 'decide': {
      const { decision, content } = step.thought;
      // A completion or failure ends the code: nothing is left to resume.
      if (decision.kind !== 'tool_calls') return undefined;
      const callIds = decision.calls.map((call) => call.callId);
      return { kind: 'recorded', callIds, ...(content === undefined ? {} : { content }) };
    }
  }
}
