import type { Decision, EventData } from '@dura/contracts';
import type { RunState } from '@dura/core';
import type { AnyCodeAgent } from './define-agent';
import { encodeJournal, type JournalEntry } from './journal';

/**
 * The thought that records a code agent's step: its decision, the values it computed (in `content`), and the
 * usage and cost of its model calls, so budgets and the read model see them as for any model turn.
 */
export function frontierThought(
  agent: Pick<AnyCodeAgent, 'name' | 'version'>,
  state: RunState,
  entries: readonly JournalEntry[],
  decision: Decision,
): EventData<'thought'> {
  const answers = entries.flatMap((entry) => (entry.k === 'model' ? [entry.a] : []));
  const usage = { inputTokens: 0, outputTokens: 0 };
  let costUsd: number | undefined;
  for (const answer of answers) {
    usage.inputTokens += answer.usage.inputTokens;
    usage.outputTokens += answer.usage.outputTokens;
    if (answer.costUsd !== undefined) costUsd = (costUsd ?? 0) + answer.costUsd;
  }
  const last = answers.at(-1);
  return {
    step: state.steps,
    model: last?.model ?? { id: `code:${agent.name}`, promptVersion: agent.version },
    ...(entries.length > 0 ? { content: encodeJournal(entries) } : {}),
    decision,
    usage,
    finishReason: decision.kind === 'tool_calls' ? 'tool_calls' : 'stop',
    ...(costUsd === undefined ? {} : { costUsd }),
  };
}
