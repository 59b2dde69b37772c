import { Handoff, type Agent } from '@openai/agents';
import { AgentMisuse } from '@dura/code-agents';
import { isDuraTool } from './dura-tools';
import { isDurableModel } from './durable-model';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- agents of any context and output
type AnyAgent = Agent<any, any>;

/** `agent` and every agent its handoffs reach, each once. */
export function agentsReachedFrom(agent: AnyAgent): AnyAgent[] {
  const seen = new Set<AnyAgent>();
  const pending: AnyAgent[] = [agent];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    for (const target of next.handoffs) pending.push(target instanceof Handoff ? target.agent : target);
  }
  return [...seen];
}

/**
 * Refuses an agent graph part of which would act in this process, unrecorded: a function or local tool
 * `duraTools` did not make, an MCP server, or a model object that is not durable (the Runner calls a model
 * object directly, past the Dura model provider). Hosted tools run at the provider, inside a recorded call.
 */
export function durableGraphCheck(agent: AnyAgent): void {
  for (const each of agentsReachedFrom(agent)) {
    const who = `agent "${each.name}"`;
    if (typeof each.model !== 'string' && !isDurableModel(each.model))
      throw new AgentMisuse(
        `${who} has a model object of its own, which the Runner would call directly, unrecorded. Give it ` +
          'a model name (resolved through the Dura model provider) or a durableModel(ctx, model, name).',
      );
    if (each.mcpServers.length > 0)
      throw new AgentMisuse(
        `${who} has MCP servers, whose calls would run in this process, unrecorded. Declare the MCP ` +
          "server's tools as Dura tools (docs/mcp.md) and pass them with duraTools(ctx, [...]).",
      );
    for (const tool of each.tools) {
      if (tool.type === 'hosted_tool' || isDuraTool(tool)) continue;
      throw new AgentMisuse(
        `${who} has the ${tool.type} tool "${tool.name}", which would run in this process, unrecorded, and ` +
          'again on every replay. Define it as a Dura tool (defineTool, run by the gateway under its ' +
          "idempotency key), declare it in the code agent's tools and pass it with duraTools(ctx, [...]).",
      );
    }
  }
}
