import { Usage, type StreamEvent } from '@openai/agents';
import { jsonForm, type InPlaceAnswer, type ModelAnswer } from '@dura/code-agents';
import { DuraError, type JsonValue } from '@dura/contracts';
import { answerOfResponse, responseOf } from './response-answer';

const KIND = 'openai-agents.stream';
type Done = Extract<StreamEvent, { type: 'response_done' }>;
type TextDelta = Extract<StreamEvent, { type: 'output_text_delta' }>;

/**
 * Reads a model's event stream to its end, passing text to `live` as it arrives, and assembles it: the text
 * deltas of one item joined into one, the provider's raw events left out. A stream that stops before its
 * `response_done` event is no answer: nothing of it is recorded.
 */
export async function assembleEvents(
  events: AsyncIterable<StreamEvent>,
  live: ((delta: string) => void) | undefined,
): Promise<StreamEvent[]> {
  const kept: StreamEvent[] = [];
  for await (const event of events) {
    if (event.type === 'model') continue;
    const last = kept.at(-1);
    if (event.type === 'output_text_delta') {
      live?.(event.delta);
      if (last?.type === 'output_text_delta' && last.itemId === event.itemId) {
        kept[kept.length - 1] = { ...last, delta: last.delta + event.delta } satisfies TextDelta;
        continue;
      }
    }
    kept.push(event);
  }
  if (!kept.some((event) => event.type === 'response_done'))
    throw new DuraError('model_unavailable', 'the model stream ended before its response_done event', {
      retryable: true,
    });
  return kept;
}

/** An assembled stream as the log records it: its events in their own shape, and its text and calls. */
export function answerOfEvents(events: readonly StreamEvent[], model: string): InPlaceAnswer {
  const done = events.find((event): event is Done => event.type === 'response_done') as Done;
  const { usage, output, id, requestId } = done.response;
  const answer = answerOfResponse({ output, usage: new Usage(usage), responseId: id, requestId }, model);
  return { ...answer, native: { kind: KIND, events: jsonForm(events) as JsonValue } };
}

/** A recorded answer as `getStreamedResponse` yields it: its recorded events, or events built from its text. */
export function eventsOf(answer: ModelAnswer): StreamEvent[] {
  const native = answer.native as { kind?: string; events?: StreamEvent[] } | undefined;
  if (native?.kind === KIND && Array.isArray(native.events)) return native.events;
  const response = responseOf(answer);
  const text: StreamEvent[] =
    answer.content === '' ? [] : [{ type: 'output_text_delta', delta: answer.content }];
  const done: Done = {
    type: 'response_done',
    response: {
      id: response.responseId ?? 'recorded',
      usage: { ...response.usage, requests: 1 },
      output: response.output as Done['response']['output'],
    },
  };
  return [{ type: 'response_started' }, ...text, done];
}
