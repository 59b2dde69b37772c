import type { JetStreamClient } from '@nats-io/jetstream';
import type { RunState } from '@dura/core';
import type { EventStore } from '@dura/event-store';
import type { Model } from '@dura/agents';
import type { Logger } from '@dura/service-kit';
import { GEN_AI_ATTRS, withSpan } from '@dura/telemetry';
import { SpanKind, type Tracer } from '@opentelemetry/api';
import { liveTextFor } from './live-text';
import { unlessSuperseded } from './superseded-watch';

/**
 * The model call, as a client span with the model and its token usage (GenAI semantic conventions): its live
 * text streamed as it comes, and aborted when another replica records the decision meanwhile.
 */
export function createModelCall(deps: {
  store: EventStore;
  js: JetStreamClient;
  log: Logger;
  model: Model;
  tracer: Tracer;
}) {
  return function callModel(state: RunState, request: NonNullable<RunState['request']>) {
    return withSpan(
      deps.tracer,
      'chat',
      { kind: SpanKind.CLIENT, attributes: { [GEN_AI_ATTRS.operationName]: 'chat' } },
      async (span) => {
        const live = liveTextFor(deps, request.runId, state.decisions);
        const turn = await unlessSuperseded(deps.store, request.runId, state.lastSeq, (signal, confirm) =>
          deps.model.decide({ state, request, live, signal, confirm }),
        );
        span.updateName(`chat ${turn.model.id}`);
        span.setAttributes({
          [GEN_AI_ATTRS.requestModel]: turn.model.id,
          [GEN_AI_ATTRS.responseModel]: turn.model.id,
          'dura.model.prompt_version': turn.model.promptVersion,
          [GEN_AI_ATTRS.inputTokens]: turn.usage.inputTokens,
          [GEN_AI_ATTRS.outputTokens]: turn.usage.outputTokens,
          'gen_ai.response.finish_reasons': [turn.finishReason],
        });
        return turn;
      },
    );
  };
}
