import type { Decision, RunRequest, Usage } from '@dura/contracts';
import type { RunState } from '@dura/core';

/** What one model call produced; recorded verbatim in a `thought` before anything acts on it. */
export interface ModelTurn {
  decision: Decision;
  content?: string;
  usage: Usage;
  model: { id: string; promptVersion: string };
  finishReason: string;
}

/** The planner's only door to a model. Implementations may do I/O; the state they get is the folded log. */
export interface Model {
  decide(input: { state: RunState; request: RunRequest & { runId: string } }): Promise<ModelTurn>;
}
