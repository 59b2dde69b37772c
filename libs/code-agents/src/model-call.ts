import type { JsonObject } from '@dura/contracts';
import type { ModelAnswer } from './model-answer';
import { ModelAnswerSchema } from './journal';

/** What a framework's call answers with; the planner adds the agent's prompt version and the priced cost. */
export type InPlaceAnswer = Omit<ModelAnswer, 'model' | 'costUsd'> & { modelId: string };

/**
 * A model call made in place by an agent framework's adapter (`ctx.modelCall`). Only `request` identifies the
 * question: its hash is what a replay must ask again at that position, so it holds everything that shapes
 * the answer (provider, model id, prompt, tools, settings) and nothing that varies between runs.
 */
export interface ModelCall {
  request: JsonObject;
  /** The provider's model id: what the call is priced at. */
  model: string;
  /**
   * The provider as model limits name it (`openai`, `anthropic`): the call is admitted under the limits of
   * `provider/model`. A call that names none is admitted under no model limit (its budgets still apply).
   */
  provider?: string;
  /** The most output tokens the call may produce: with `inputChars`, the worst case reserved before it. */
  maxTokens: number;
  /** The size of what is sent, in characters (about 4 a token). */
  inputChars: number;
  /**
   * Makes the call, passing text deltas to `live` as they arrive; `signal` aborts it when its answer is no
   * longer wanted (another replica recorded the decision). A failure to report as final (the provider
   * refused the request) is a `DuraError` with code `model_request_rejected` and `retryable: false`.
   */
  invoke(live?: (delta: string) => void, signal?: AbortSignal): Promise<InPlaceAnswer>;
}

/**
 * The answer recorded for a framework's call: the agent's version as its prompt version, its priced cost,
 * in the journal's own form (its fields in the order a replay decodes them), so the thought a replay derives
 * is the recorded one, byte for byte.
 */
export function recordedAnswer(
  answer: InPlaceAnswer,
  agent: { version: string },
  costUsd: number | undefined,
): ModelAnswer {
  const { modelId, ...rest } = answer;
  const recorded = {
    ...rest,
    model: { id: modelId, promptVersion: agent.version },
    ...(costUsd === undefined ? {} : { costUsd }),
  };
  // One the journal cannot hold is returned as it is: the planner refuses to record it, naming why.
  const parsed = ModelAnswerSchema.safeParse(recorded);
  return parsed.success ? parsed.data : recorded;
}

/**
 * The answer exactly as the log will give it back (plain JSON): the code that goes on in this process reads
 * the same values a replay elsewhere reads, so the next request it builds hashes the same.
 */
export function recordableAnswer(answer: InPlaceAnswer): InPlaceAnswer {
  return JSON.parse(JSON.stringify(answer)) as InPlaceAnswer;
}
