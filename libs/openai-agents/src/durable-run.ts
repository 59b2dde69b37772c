import {
  Runner,
  type Agent,
  type AgentInputItem,
  type ModelProvider,
  type RunResult,
  type RunState,
  type RunToolApprovalItem,
  type StreamedRunResult,
} from '@openai/agents';
import { frameworkCtx, type Ctx } from '@dura/code-agents';
import { durableGraphCheck } from './agent-graph';
import { duraModelProvider, type DurableModelOptions } from './durable-model';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- agents of any context and output
type AnyAgent = Agent<any, any>;

export interface DurableRunOptions extends DurableModelOptions {
  /** Resolves the agents' model names (`new OpenAIProvider({ ... })`, say); each model is made durable. */
  provider: ModelProvider;
  /** Ask the models for streamed responses: their text goes to the run's live tokens as it arrives. */
  stream?: boolean;
  /** The most model turns of each Runner pass (the SDK's `maxTurns`). */
  maxTurns?: number;
  /** The model name of an agent that names none. */
  defaultModel?: string;
}

/** The Runner's result, once the run has finished (every approval answered). */
export type DurableRunResult<TAgent extends AnyAgent> =
  RunResult<unknown, TAgent> | StreamedRunResult<unknown, TAgent>;

/**
 * Runs an Agents SDK agent inside a code agent, durably: model calls are recorded (`duraModelProvider`),
 * function tools are Dura tools (`duraTools`), a `needsApproval` interruption waits for a Dura approval
 * (`ctx.approve`, answered with `dura approve`, the console or MCP) and the run goes on with the verdict, and
 * each handoff is marked on the run's step (`handoff: triage → refunds`). Refuses an agent graph that would
 * act in this process, unrecorded, and a `ctx` that is not a code agent's.
 *
 * @example
 * const result = await durableRun(ctx, triage, input.question, { provider: new OpenAIProvider() });
 * return { answer: result.finalOutput };
 */
export async function durableRun<TAgent extends AnyAgent>(
  ctx: Ctx,
  agent: TAgent,
  input: string | AgentInputItem[],
  options: DurableRunOptions,
): Promise<DurableRunResult<TAgent>> {
  const dura = frameworkCtx(ctx, 'durableRun(ctx, agent, input, options)');
  durableGraphCheck(agent);
  const runner = new Runner({
    modelProvider: duraModelProvider(dura, options.provider, options),
    // Traces would leave the process from code that replays: the run's log and Dura's own spans are its trace.
    tracingDisabled: true,
  });
  runner.on('agent_handoff', (_context, from: AnyAgent, to: AnyAgent) =>
    dura.mark(`handoff: ${from.name} → ${to.name}`),
  );
  let next: string | AgentInputItem[] | RunState<unknown, TAgent> = input;
  for (;;) {
    const result: DurableRunResult<TAgent> = await pass(runner, agent, next, options);
    if (result.interruptions.length === 0) return result;
    for (const item of result.interruptions) await verdictOn(dura, result.state, item);
    next = result.state;
  }
}

async function pass<TAgent extends AnyAgent>(
  runner: Runner,
  agent: TAgent,
  input: string | AgentInputItem[] | RunState<unknown, TAgent>,
  options: DurableRunOptions,
): Promise<DurableRunResult<TAgent>> {
  const maxTurns = options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns };
  if (!options.stream) return runner.run(agent, input, maxTurns);
  const result = await runner.run(agent, input, { ...maxTurns, stream: true });
  // Drained here: the text already went to the run's live tokens from the model call itself.
  for await (const _event of result.toStream());
  await result.completed;
  const failed: unknown = result.error;
  if (failed !== null && failed !== undefined)
    throw failed instanceof Error
      ? failed
      : new Error(`the Agents SDK run failed: ${JSON.stringify(failed)}`);
  return result;
}

/** One interruption's Dura approval: the wait `approve.<tool>`, answered by a person, applied to the state. */
async function verdictOn(
  ctx: Ctx,
  state: RunState<unknown, AnyAgent>,
  item: RunToolApprovalItem,
): Promise<void> {
  const tool = item.name ?? item.toolName ?? 'tool';
  const verdict = await ctx.approve(`approve.${tool}`);
  if (verdict.approved) state.approve(item);
  else state.reject(item, { message: `A person refused this call: ${verdict.reason ?? 'no reason given'}.` });
}
