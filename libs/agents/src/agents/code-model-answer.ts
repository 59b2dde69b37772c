import { DuraError } from '@dura/contracts';
import type { Reservation } from '@dura/core';
import {
  type AnyCodeAgent,
  type CodeModelSettings,
  type ModelAnswer,
  type ModelCall,
} from '@dura/code-agents';
import { recordedAnswer, type ResolvedModelRequest } from '@dura/code-agents/engine';
import type { ToolRegistry } from '@dura/tools';
import { liveOptions, toolSpecsFor, type ChatProvider, type ChatToolSpec } from '../llm';
import type { DecideInput } from '../model';
import type { ModelPrice } from './definition';
import { priceOf } from './model-price';
import { providerCache } from './provider-cache';

export interface CodeModelAnswerDeps {
  /** The deployment's tools: their JSON schemas describe a request's `tools` to the model. */
  tools?: ToolRegistry;
  /** Prices by model id (the agents file's `prices`), for cost budgets and recorded costs. */
  prices?: Record<string, ModelPrice>;
  env?: Record<string, string | undefined>;
  /** Builds the provider client of an agent's model settings (tests inject an in-process one). */
  providerFor?: (settings: CodeModelSettings) => ChatProvider;
}

/** How a code agent's `ctx.model` calls are made and budgeted. */
export interface CodeModelAnswer {
  /** Asks the agent's provider through the LLM adapters (retries, answer validation), streaming to `input.live`. */
  answer: (
    request: ResolvedModelRequest,
    input: DecideInput,
    agent: AnyCodeAgent,
    /** Which `ctx.model` call of the step this is (its live text is tagged with it). */
    call?: number,
  ) => Promise<ModelAnswer>;
  /** The call's worst case: its estimated input plus `maxTokens`, priced; reserved before it is made. */
  worstCase: (request: ResolvedModelRequest, agent: AnyCodeAgent) => Reservation;
  /**
   * A framework's call made in place (`ctx.modelCall`), streaming to `input.live`, aborted by `input.signal`,
   * its answer priced.
   */
  inPlace: (call: ModelCall, input: DecideInput, agent: AnyCodeAgent, k?: number) => Promise<ModelAnswer>;
  /** The worst case of a framework's call, by the same estimate. */
  worstCaseOf: (call: ModelCall) => Reservation;
}

/** `ctx.model` served through the same adapters, settings and prices as JSON agents. */
export function createCodeModelAnswer(deps: CodeModelAnswerDeps = {}): CodeModelAnswer {
  const providerOf = providerCache<CodeModelSettings>(deps.env ?? process.env, deps.providerFor);
  const prices = deps.prices ?? {};

  function specs(request: ResolvedModelRequest, agent: { name: string; version: string }): ChatToolSpec[] {
    if (request.tools.length === 0) return [];
    const who = `code agent ${agent.name}@${agent.version}`;
    if (!deps.tools)
      throw new DuraError(
        'model_request_rejected',
        `${who} offers tools to ctx.model, but this planner has no tool registry to describe them`,
      );
    try {
      return toolSpecsFor(deps.tools, request.tools);
    } catch (err) {
      throw new DuraError('model_request_rejected', `${who}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** The same estimate as a JSON agent's: 4 characters a token over what is sent, plus the most output. */
  function worst(model: string, chars: number, maxTokens: number): Reservation {
    const usage = { inputTokens: Math.ceil(chars / 4), outputTokens: maxTokens };
    return { tokens: usage.inputTokens + usage.outputTokens, costUsd: priceOf(prices, model, usage) };
  }

  return {
    async answer(request, { live, signal }, agent, call = 0) {
      const settings = agent.model;
      if (!settings)
        throw new DuraError(
          'model_request_rejected',
          `code agent ${agent.name}@${agent.version} asks the model but declares no model settings`,
        );
      const response = await providerOf(settings).chat({
        model: request.model,
        messages: request.messages,
        tools: specs(request, agent),
        maxTokens: request.maxTokens,
        ...(typeof request.temperature === 'number' ? { temperature: request.temperature } : {}),
        ...liveOptions(live, call),
        ...(signal ? { signal } : {}),
      });
      return {
        content: response.content ?? '',
        ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
        usage: response.usage,
        model: { id: response.modelId, promptVersion: agent.version },
        finishReason: response.finishReason,
        costUsd: priceOf(prices, request.model, response.usage),
      };
    },

    worstCase(request, agent) {
      const chars = JSON.stringify(request.messages).length + JSON.stringify(specs(request, agent)).length;
      return worst(request.model, chars, request.maxTokens);
    },

    async inPlace(call, { live, signal }, agent, k = 0) {
      // The step's k-th model call: its live text is tagged with k, as for a ctx.model call.
      const answer = await call.invoke(live ? (delta: string) => live.delta(k, delta) : undefined, signal);
      return recordedAnswer(answer, agent, priceOf(prices, call.model, answer.usage));
    },

    worstCaseOf: (call) => worst(call.model, call.inputChars, call.maxTokens),
  };
}
