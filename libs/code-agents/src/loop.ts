import * as z from 'zod';
import {
  ChatMessageSchema,
  ToolNameSchema,
  formatIssues,
  type ChatMessage,
  type ChatToolCall,
} from '@dura/contracts';
import type { Ctx, LoopRequest, LoopResult } from './ctx';
import { AgentMisuse, ToolFailure } from './errors';

const LoopRequestSchema = z
  .strictObject({
    system: z.string().optional(),
    prompt: z.string().optional(),
    messages: z.array(ChatMessageSchema).optional(),
    tools: z.array(ToolNameSchema),
    maxTurns: z.number().int().positive().max(1000),
    model: z.string().min(1).optional(),
    maxTokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
  })
  .refine((r) => r.prompt !== undefined || (r.messages?.length ?? 0) > 0, {
    message: 'give a prompt or a non-empty messages list',
  });

/**
 * The LLM tool loop over recorded primitives only (`ctx.model`, `ctx.tool`), so it replays like any code:
 * each model turn is a recorded answer, each batch of tool calls one decision with parallel intents.
 */
export async function runLoop(ctx: Ctx, request: LoopRequest): Promise<LoopResult> {
  const parsed = LoopRequestSchema.safeParse(request);
  if (!parsed.success)
    throw new AgentMisuse(`ctx.loop: the request is invalid: ${formatIssues(parsed.error).join('; ')}`);
  const { system, prompt, tools, maxTurns, model, maxTokens, temperature } = parsed.data;
  const messages: ChatMessage[] = [
    ...(parsed.data.messages ?? []),
    ...(prompt === undefined ? [] : [{ role: 'user' as const, content: prompt }]),
  ];
  const options = {
    ...(system === undefined ? {} : { system }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(model === undefined ? {} : { model }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(temperature === undefined ? {} : { temperature }),
  };
  let text = '';
  for (let turn = 1; turn <= maxTurns; turn += 1) {
    const answer = await ctx.model({ ...options, messages: [...messages] });
    text = answer.content;
    const calls = answer.toolCalls ?? [];
    messages.push({
      role: 'assistant',
      ...(text === '' ? {} : { content: text }),
      ...(calls.length === 0 ? {} : { toolCalls: calls }),
    });
    if (calls.length === 0) return { text, messages, turns: turn, finished: true };
    // All at once: the calls of one answer become one decision with parallel intents.
    messages.push(...(await Promise.all(calls.map((call) => toolResult(ctx, tools, call)))));
  }
  return { text, messages, turns: maxTurns, finished: false };
}

/** A tool call's outcome as the model reads it; a failure is an error result, not the end of the loop. */
async function toolResult(ctx: Ctx, tools: readonly string[], call: ChatToolCall): Promise<ChatMessage> {
  const base = { role: 'tool' as const, toolCallId: call.id, name: call.name };
  if (!tools.includes(call.name))
    return {
      ...base,
      content: `error unknown_tool: ${call.name} is not one of ${tools.join(', ')}`,
      isError: true,
    };
  try {
    return { ...base, content: JSON.stringify(await ctx.tool(call.name, call.arguments)) };
  } catch (err) {
    if (!(err instanceof ToolFailure)) throw err;
    return { ...base, content: `error ${err.error.code}: ${err.error.message}`, isError: true };
  }
}
