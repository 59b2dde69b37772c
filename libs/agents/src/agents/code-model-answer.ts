import { DuraError } from '@dura/contracts';
import type { Reservation } from '@dura/core';
import {
  type AnyCodeAgent,
  type CodeModelSettings,
  type ModelAnswer,
  type ModelCall,
} from '@dura/code-agents';
import { recordedAnswer, type ModelAsk, type ResolvedModelRequest } from '@dura/code-agents/engine';
import type { ToolRegistry } from '@dura/tools';
import { liveOptions, toolSpecsFor, type ChatProvider, type ChatToolSpec } from '../llm';
import type { CallWorstCase, DecideInput } from '../model';
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
  /** Told of each 429 a provider answers (`provider/model`, its `Retry-After`): flow control lowers the rate. */
  onRateLimited?: (model: string, retryAfterMs: number | undefined) => void;
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
  /**
   * What flow control admits the call on: `provider/model` and the same estimate in tokens. Undefined for a
   * framework's call that names no provider (no model limit can name it).
   */
  limitCost: (ask: ModelAsk, agent: AnyCodeAgent) => CallWorstCase | undefined;
}

/** `ctx.model` served through the same adapters, settings and prices as JSON agents. */
export function createCodeModelAnswer(deps: CodeModelAnswerDeps = {}): CodeModelAnswer {
  const providerOf = providerCache<CodeModelSettings>(
    deps.env ?? process.env,
    deps.providerFor,
    deps.onRateLimited &&
      ((target, retryAfterMs) => deps.onRateLimited?.(`${target.provider}/${target.model}`, retryAfterMs)),
  );
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
  function usageOf(chars: number, maxTokens: number) {
    return { inputTokens: Math.ceil(chars / 4), outputTokens: maxTokens };
  }

  function worst(model: string, chars: number, maxTokens: number): Reservation {
    const usage = usageOf(chars, maxTokens);
    return { tokens: usage.inputTokens + usage.outputTokens, costUsd: priceOf(prices, model, usage) };
  }

  function requestChars(request: ResolvedModelRequest, agent: AnyCodeAgent): number {
    return JSON.stringify(request.messages).length + JSON.stringify(specs(request, agent)).length;
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

    worstCase: (request, agent) => worst(request.model, requestChars(request, agent), request.maxTokens),

    async inPlace(call, { live, signal }, agent, k = 0) {
      // The step's k-th model call: its live text is tagged with k, as for a ctx.model call.
      const answer = await call.invoke(live ? (delta: string) => live.delta(k, delta) : undefined, signal);
      return recordedAnswer(answer, agent, priceOf(prices, call.model, answer.usage));
    },

    worstCaseOf: (call) => worst(call.model, call.inputChars, call.maxTokens),

    limitCost({ request, call }, agent) {
      if (request)
        return {
          model: `${request.provider}/${request.model}`,
          ...usageOf(requestChars(request, agent), request.maxTokens),
        };
      if (!call.provider) return undefined;
      return { model: `${call.provider}/${call.model}`, ...usageOf(call.inputChars, call.maxTokens) };
    },
  };
}
