import type { ChatToolCall, JsonValue, Usage } from '@dura/contracts';

/** The model's answer as recorded: usage and cost are settled against the run's budgets in the thought. */
export interface ModelAnswer {
  content: string;
  /** The calls the model asks for, when the request offered it tools (Dura tool names). */
  toolCalls?: ChatToolCall[];
  usage: Usage;
  /** Which model answered, and under which prompt version. */
  model: { id: string; promptVersion: string };
  finishReason: string;
  costUsd?: number;
  /**
   * The answer in the calling framework's own shape (an AI SDK model's content or stream parts), as JSON:
   * given back to the framework as is on replay. Absent for `ctx.model`.
   */
  native?: JsonValue;
}
