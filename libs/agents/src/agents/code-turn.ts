import type { CodeStep } from '@dura/code-agents/engine';
import type { ToolRegistry } from '@dura/tools';
import type { CodeTurn } from '../model';
import { withToolApprovals } from '../model-router';

/**
 * What the planner makes of a code agent's step once its model calls are answered: the thought to record
 * (tools defined with `requiresApproval` waiting for approval, as for any agent), an operator wait, or
 * nothing yet: the mapping `withCodeAgents` makes of the steps it decides, as replay needs it too.
 */
export function codeTurnOf(step: Exclude<CodeStep, { kind: 'model' }>, tools?: ToolRegistry): CodeTurn {
  switch (step.kind) {
    case 'suspended':
      return { kind: 'suspended' };
    case 'blocked':
      return { kind: 'blocked', reason: step.error.message };
    case 'decide': {
      const { thought } = step;
      return {
        kind: 'turn',
        turn: withToolApprovals(
          {
            decision: thought.decision,
            ...(thought.content === undefined ? {} : { content: thought.content }),
            usage: thought.usage,
            model: thought.model,
            finishReason: thought.finishReason,
            ...(thought.costUsd === undefined ? {} : { costUsd: thought.costUsd }),
          },
          tools,
        ),
      };
    }
  }
}
