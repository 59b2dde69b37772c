import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Middleware,
} from '@ai-sdk/provider';
import { wrapLanguageModel, type LanguageModel } from 'ai';
import {
  frameworkCtx,
  recordableAnswer,
  type Ctx,
  type InPlaceAnswer,
  type ModelAnswer,
} from '@dura/code-agents';
import { callRequest, inputChars, type CallMode } from './call-request';

import { offeredToolsCheck } from './dura-tools';
import { answerOfGenerate, generateResultOf } from './generate-answer';
import { providerFailure } from './provider-errors';
import { answerOfStream, assembleStream, streamResultOf } from './stream-answer';

export interface DurableOptions {
  /**
   * The most output tokens of a call that sets none (`maxOutputTokens`): the call is made with it, and its
   * budget reserved on it. Default 4096.
   */
  maxOutputTokens?: number;
  /** Attempts at a call the provider could not answer before the decision is retried later. Default 2. */
  maxAttempts?: number;
}

const DEFAULT_MAX_OUTPUT_TOKENS = 4096;
const DEFAULT_ATTEMPTS = 2;
const RETRY_DELAY_MS = 250;

/** A model from the AI SDK itself (not a gateway model id). */
export type AiSdkModel = Exclude<LanguageModel, string>;

/**
 * `model`, durably, for a code agent: every `doGenerate` and `doStream` call (so `generateText`,
 * `streamText`, `generateObject`, `streamObject`) is recorded in the run's log as `ctx.model` records a call
 * and answered from the log on replay; a streamed call is recorded as its assembled stream and replayed as
 * a stream of parts. Throws when `ctx` is not a code agent's context.
 *
 * @example
 * const { text } = await generateText({ model: durable(ctx, openai.chat('gpt-4o-mini')), prompt: topic });
 */
export function durable(ctx: Ctx, model: AiSdkModel, options: DurableOptions = {}): LanguageModelV4 {
  return wrapLanguageModel({ model, middleware: durableMiddleware(ctx, options) });
}

/** The middleware `durable` applies, for a `wrapLanguageModel` of your own (put it last, nearest the model). */
export function durableMiddleware(ctx: Ctx, options: DurableOptions = {}): LanguageModelV4Middleware {
  const dura = frameworkCtx(ctx, 'durable(ctx, model)');
  const maxOutputTokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const attempts = options.maxAttempts ?? DEFAULT_ATTEMPTS;

  function record(
    mode: CallMode,
    model: LanguageModelV4,
    params: LanguageModelV4CallOptions,
    call: (params: LanguageModelV4CallOptions, live?: (delta: string) => void) => Promise<InPlaceAnswer>,
  ): Promise<ModelAnswer> {
    offeredToolsCheck(dura, params.tools);
    const request = callRequest(mode, model, params);
    return dura.modelCall({
      request,
      model: model.modelId,
      // `openai.chat`, `anthropic.messages`: model limits name the provider only.
      provider: model.provider.split('.')[0] ?? model.provider,
      maxTokens: params.maxOutputTokens ?? maxOutputTokens,
      inputChars: inputChars(request),
      invoke: async (live, signal) => {
        const abortSignal = joined(params.abortSignal, signal);
        const made = () => call({ ...params, ...(abortSignal ? { abortSignal } : {}) }, live);
        return recordableAnswer(await withAttempts(attempts, model, made, signal));
      },
    });
  }

  return {
    specificationVersion: 'v4',
    transformParams: ({ params }) =>
      Promise.resolve({ ...params, maxOutputTokens: params.maxOutputTokens ?? maxOutputTokens }),
    // The call is made by the planner with the planner's abort signal joined to the caller's, so it goes to
    // the model itself rather than through the doGenerate/doStream closures, which hold the caller's only.
    async wrapGenerate({ params, model }) {
      const answer = await record('generate', model, params, async (made) =>
        answerOfGenerate(await model.doGenerate(made), model),
      );
      return generateResultOf(answer);
    },
    async wrapStream({ params, model }) {
      const answer = await record('stream', model, params, async (made, live) =>
        answerOfStream(await assembleStream((await model.doStream(made)).stream, live), model),
      );
      return streamResultOf(answer);
    },
  };
}

function joined(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const given = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  return given.length > 1 ? AbortSignal.any(given) : given[0];
}

async function withAttempts<T>(
  attempts: number,
  model: LanguageModelV4,
  call: () => Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (err) {
      const failure = providerFailure(err, model);
      if (!failure.retryable || attempt >= attempts || signal?.aborted) throw failure;
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * attempt));
    }
  }
}
