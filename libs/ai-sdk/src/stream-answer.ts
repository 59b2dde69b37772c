import type {
  LanguageModelV4,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from '@ai-sdk/provider';
import { DuraError, type JsonValue } from '@dura/contracts';
import type { InPlaceAnswer, ModelAnswer } from '@dura/code-agents';
import { contentOf, finishReasonOf, revived, toolCallsOf, usageOf, usageOfAnswer } from './answer-fields';
import { jsonForm } from '@dura/code-agents';

const KIND = 'ai-sdk.stream';
const MERGED = new Set(['text-delta', 'reasoning-delta', 'tool-input-delta']);

type Delta = Extract<
  LanguageModelV4StreamPart,
  { type: 'text-delta' | 'reasoning-delta' | 'tool-input-delta' }
>;

/**
 * Reads a provider's stream to its end, passing text to `live` as it arrives, and assembles it: the deltas
 * of one text, reasoning or tool input joined into one, raw chunks and pings left out. A stream that reports
 * an error or stops before its `finish` part is no answer: nothing of it is recorded.
 */
export async function assembleStream(
  stream: ReadableStream<LanguageModelV4StreamPart>,
  live: ((delta: string) => void) | undefined,
): Promise<LanguageModelV4StreamPart[]> {
  const parts: LanguageModelV4StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value: part } = await reader.read();
    if (done) break;
    if (part.type === 'error') throw streamError(part.error);
    if (part.type === 'raw' || part.type === 'ping') continue;
    if (part.type === 'text-delta') live?.(part.delta);
    const last = parts.at(-1);
    if (MERGED.has(part.type) && last?.type === part.type && (last as Delta).id === (part as Delta).id)
      parts[parts.length - 1] = { ...(last as Delta), delta: (last as Delta).delta + (part as Delta).delta };
    else parts.push(part);
  }
  if (!parts.some((part) => part.type === 'finish'))
    throw new DuraError('model_unavailable', 'the model stream ended before its finish part', {
      retryable: true,
    });
  return parts;
}

function streamError(error: unknown): DuraError {
  const why = error instanceof Error ? error.message : JSON.stringify(jsonForm(error) ?? null);
  return new DuraError('model_unavailable', `the model stream reported an error: ${why}`, {
    retryable: true,
    cause: error,
  });
}

/** An assembled stream as the log records it: its parts in their own shape, and its text. */
export function answerOfStream(
  parts: readonly LanguageModelV4StreamPart[],
  model: Pick<LanguageModelV4, 'modelId'>,
): InPlaceAnswer {
  const finish = parts.find((part) => part.type === 'finish') as Extract<
    LanguageModelV4StreamPart,
    { type: 'finish' }
  >;
  const meta = parts.find((part) => part.type === 'response-metadata');
  const text = parts.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : [])).join('');
  const calls = toolCallsOf(parts.flatMap((part) => (part.type === 'tool-call' ? [part] : [])));
  return {
    content: text,
    ...(calls.length > 0 ? { toolCalls: calls } : {}),
    usage: usageOf(finish.usage),
    modelId: meta?.modelId ?? model.modelId,
    finishReason: finish.finishReason.unified,
    native: { kind: KIND, parts: jsonForm(parts) as JsonValue },
  };
}

/** A recorded answer as `doStream` returns it: its recorded parts, or parts built from its text, replayed. */
export function streamResultOf(answer: ModelAnswer): LanguageModelV4StreamResult {
  const native = answer.native as { kind?: string; parts?: LanguageModelV4StreamPart[] } | undefined;
  const parts =
    native?.kind === KIND && Array.isArray(native.parts)
      ? native.parts.map((part) => revived(part))
      : partsOf(answer);
  const stream = new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
  return { stream };
}

/** The parts of an answer recorded without them (a stand-in's). */
function partsOf(answer: ModelAnswer): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  for (const item of contentOf(answer)) {
    if (item.type === 'text')
      parts.push(
        { type: 'text-start', id: '0' },
        { type: 'text-delta', id: '0', delta: item.text },
        { type: 'text-end', id: '0' },
      );
    else if (item.type === 'tool-call') parts.push(item);
  }
  parts.push({ type: 'finish', usage: usageOfAnswer(answer), finishReason: finishReasonOf(answer) });
  return parts;
}
