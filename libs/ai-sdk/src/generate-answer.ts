import type {
  LanguageModelV4,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
} from '@ai-sdk/provider';
import type { JsonObject } from '@dura/contracts';
import type { InPlaceAnswer, ModelAnswer } from '@dura/code-agents';
import { contentOf, finishReasonOf, revived, toolCallsOf, usageOf, usageOfAnswer } from './answer-fields';
import { jsonObject } from '@dura/code-agents';

const KIND = 'ai-sdk.generate';

/** What `doGenerate` answered, as the log records it: the whole result in its own shape, and its text. */
export function answerOfGenerate(
  result: LanguageModelV4GenerateResult,
  model: Pick<LanguageModelV4, 'modelId'>,
): InPlaceAnswer {
  const native = jsonObject({
    content: result.content,
    finishReason: result.finishReason,
    usage: result.usage,
    providerMetadata: result.providerMetadata,
    structuredOutputText: result.structuredOutputText,
    response: result.response && {
      id: result.response.id,
      modelId: result.response.modelId,
      timestamp: result.response.timestamp,
    },
    warnings: result.warnings,
  });
  const text = result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  const calls = toolCallsOf(result.content.flatMap((part) => (part.type === 'tool-call' ? [part] : [])));
  return {
    content: text,
    ...(calls.length > 0 ? { toolCalls: calls } : {}),
    usage: usageOf(result.usage),
    modelId: result.response?.modelId ?? model.modelId,
    finishReason: result.finishReason.unified,
    native: { kind: KIND, result: native },
  };
}

/** A recorded answer as `doGenerate` returns it: the recorded result itself, or one built from its text. */
export function generateResultOf(answer: ModelAnswer): LanguageModelV4GenerateResult {
  const native = answer.native as { kind?: string; result?: JsonObject } | undefined;
  if (native?.kind !== KIND || !native.result) {
    const content = contentOf(answer);
    return { content, finishReason: finishReasonOf(answer), usage: usageOfAnswer(answer), warnings: [] };
  }
  const recorded = native.result as unknown as LanguageModelV4GenerateResult;
  return {
    ...recorded,
    content: recorded.content.map((part: LanguageModelV4Content) => revived(part)),
    ...(recorded.response ? { response: revived(recorded.response) } : {}),
    warnings: recorded.warnings ?? [],
  };
}
