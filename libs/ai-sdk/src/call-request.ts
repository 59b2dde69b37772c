import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { JsonObject } from '@dura/contracts';
import { jsonObject } from '@dura/code-agents';

/** Whether the framework asked for the whole answer (`doGenerate`) or a stream of parts (`doStream`). */
export type CallMode = 'generate' | 'stream';

/**
 * What identifies an AI SDK model call in the log: the model, the mode and every option that shapes the
 * answer. Headers and the abort signal do not: they change nothing the model says.
 */
export function callRequest(
  mode: CallMode,
  model: Pick<LanguageModelV4, 'provider' | 'modelId'>,
  params: LanguageModelV4CallOptions,
): JsonObject {
  const { abortSignal: _signal, headers: _headers, includeRawChunks: _raw, ...shaping } = params;
  return jsonObject({
    framework: 'ai-sdk',
    mode,
    provider: model.provider,
    model: model.modelId,
    ...shaping,
  });
}

/** The size of what is sent, in characters: the estimate a call's budget is reserved on. */
export function inputChars(request: JsonObject): number {
  return JSON.stringify([request['prompt'], request['tools'] ?? null]).length;
}
