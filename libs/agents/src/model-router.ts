import { isControlTool, type ApprovalPolicy, type Decision } from '@dura/contracts';
import type { ToolRegistry } from '@dura/tools';
import type { AgentCatalog, CallCosts, ContextSummaries, Model, ModelTurn, PlannerModel } from './model';

/**
 * The planner's model: inline scripted plans go to the scripted model, runs of registered agents to the
 * agent model, which pins them, budgets them and calls their provider. Tools defined with
 * `requiresApproval` wait for approval whatever model asked for them.
 */
export function createModelRouter(deps: {
  scripted: PlannerModel;
  agents: PlannerModel;
  tools?: ToolRegistry;
}): Model & AgentCatalog & CallCosts & ContextSummaries {
  const { scripted, agents, tools } = deps;

  return {
    decide: async (input) =>
      withToolApprovals(
        await (input.request.agent.kind === 'agent' ? agents : scripted).decide(input),
        tools,
      ),
    start: (request) => (agents.start ?? scripted.start)?.(request) ?? {},
    serves: (pinned) => agents.serves?.(pinned) ?? false,
    inputSecrets: (agent) => agents.inputSecrets?.(agent),
    reservation: (input) =>
      input.request.agent.kind === 'agent' && agents.reservation
        ? agents.reservation(input)
        : Promise.resolve({ tokens: 0, costUsd: 0 }),
    callCost: (input) =>
      input.request.agent.kind === 'agent' && agents.callCost
        ? agents.callCost(input)
        : Promise.resolve(undefined),
    summarize: (input) =>
      input.request.agent.kind === 'agent' && agents.summarize
        ? agents.summarize(input)
        : Promise.resolve(undefined),
  };
}

function toolApproval(tools: ToolRegistry, tool: string): ApprovalPolicy | undefined {
  const flag = isControlTool(tool) ? undefined : tools.get(tool)?.requiresApproval;
  if (!flag) return undefined;
  const policy = typeof flag === 'object' ? flag : {};
  return {
    onTimeout: policy.onTimeout ?? 'reject',
    ...(policy.timeoutSeconds === undefined ? {} : { timeoutSeconds: policy.timeoutSeconds }),
  };
}

/** The turn with every call of a tool defined with `requiresApproval` waiting for its approval. */
export function withToolApprovals(turn: ModelTurn, tools: ToolRegistry | undefined): ModelTurn {
  if (turn.decision.kind !== 'tool_calls' || !tools) return turn;
  const decision: Decision = {
    kind: 'tool_calls',
    calls: turn.decision.calls.map((call) => {
      const approval = call.approval ?? toolApproval(tools, call.tool);
      return approval ? { ...call, approval } : call;
    }),
  };
  return { ...turn, decision };
}
