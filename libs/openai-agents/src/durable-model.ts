import {
  getCurrentTraceContext,
  NoopTrace,
  withTraceContext,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from '@openai/agents';
import { frameworkCtx, recordableAnswer, type Ctx, type InPlaceAnswer } from '@dura/code-agents';
import { callRequest, inputChars, type CallMode } from './call-request';
import { offeredToolsCheck } from './dura-tools';
import { providerFailure } from './provider-errors';
import { answerOfResponse, responseOf } from './response-answer';
import { answerOfEvents, assembleEvents, eventsOf } from './stream-answer';

export interface DurableModelOptions {
  /**
   * The most output tokens of a call whose model settings set none (`maxTokens`): the call is made with it,
   * and its budget reserved on it. Default 4096.
   */
  maxOutputTokens?: number;
  /**
   * The provider serving `name`, as model limits name it: the calls are admitted under the limits of
   * `limitProvider/name`. Default `openai`, the Agents SDK's own provider.
   */
  limitProvider?: string;
}

const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** The models this package made: the Runner may call these, and no other. */
const durableModels = new WeakSet<Model>();

/** Whether `model` records its calls in a Dura run's log (made by `durableModel` or `duraModelProvider`). */
export function isDurableModel(model: unknown): boolean {
  return typeof model === 'object' && model !== null && durableModels.has(model as Model);
}

/**
 * `model` (an Agents SDK `Model`, called `name`), durably, for a code agent: every `getResponse` and
 * `getStreamedResponse` call is recorded in the run's log as `ctx.model` records a call and answered from
 * the log on replay; a streamed call is recorded as its assembled events, its text going to the run's live
 * tokens as it arrives. Throws when `ctx` is not a code agent's context.
 *
 * @example
 * const agent = new Agent({ name: 'triage', model: durableModel(ctx, await provider.getModel('gpt-4o-mini'), 'gpt-4o-mini') });
 */
export function durableModel(ctx: Ctx, model: Model, name: string, options: DurableModelOptions = {}): Model {
  const dura = frameworkCtx(ctx, 'durableModel(ctx, model, name)');
  const maxOutputTokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;

  async function record(
    mode: CallMode,
    given: ModelRequest,
    call: (request: ModelRequest, live?: (delta: string) => void) => Promise<InPlaceAnswer>,
  ) {
    offeredToolsCheck(dura, given.tools);
    // The planner makes the call later, outside the Runner's async context, where the SDK finds no trace:
    // its getResponse opens a generation span unconditionally and throws without one. The call runs in the
    // caller's trace context (a NoopTrace under durableRun), or a NoopTrace when there is none.
    const traced = getCurrentTraceContext() ?? { trace: new NoopTrace() };
    const maxTokens = given.modelSettings.maxTokens ?? maxOutputTokens;
    const params: ModelRequest = { ...given, modelSettings: { ...given.modelSettings, maxTokens } };
    const request = callRequest(mode, name, params);
    return dura.modelCall({
      request,
      model: name,
      provider: options.limitProvider ?? 'openai',
      maxTokens,
      inputChars: inputChars(request),
      invoke: async (live, signal) => {
        const joined = joinedSignal(given.signal, signal);
        try {
          const made = { ...params, ...(joined ? { signal: joined } : {}) };
          return recordableAnswer(await withTraceContext(traced, () => call(made, live)));
        } catch (err) {
          throw providerFailure(err, name);
        }
      },
    });
  }

  const durable: Model = {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const answer = await record('response', request, async (made) =>
        answerOfResponse(await model.getResponse(made), name),
      );
      return responseOf(answer);
    },
    async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
      const answer = await record('stream', request, async (made, live) =>
        answerOfEvents(await assembleEvents(model.getStreamedResponse(made), live), name),
      );
      yield* eventsOf(answer);
    },
  };
  durableModels.add(durable);
  return durable;
}

/**
 * `provider`'s models, durably (`durableModel`): what a Runner of a code agent resolves agents' model names
 * with. Throws when `ctx` is not a code agent's context.
 *
 * @example
 * const runner = new Runner({ modelProvider: duraModelProvider(ctx, new OpenAIProvider()), tracingDisabled: true });
 */
export function duraModelProvider(
  ctx: Ctx,
  provider: ModelProvider,
  options: DurableModelOptions & { defaultModel?: string } = {},
): ModelProvider {
  const dura = frameworkCtx(ctx, 'duraModelProvider(ctx, provider)');
  return {
    async getModel(modelName?: string) {
      const name = modelName ?? options.defaultModel;
      if (!name)
        throw new Error(
          'duraModelProvider: an agent names no model; give each agent a model name, or the provider a ' +
            'defaultModel, so each call is recorded under the model that answered it',
        );
      return durableModel(dura, await provider.getModel(name), name, options);
    },
  };
}

function joinedSignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const given = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  return given.length > 1 ? AbortSignal.any(given) : given[0];
}
