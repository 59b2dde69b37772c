import {
  CURRENT_EVENT_VERSIONS,
  type Decision,
  type EventData,
  type EventType,
  type JsonObject,
  type JsonValue,
  type RunEvent,
  type RunRequest,
  type ScriptedStep,
} from '@dura/contracts';
import { fold, idempotencyKey, type RunState } from '@dura/core';

/** A scripted run request. */
export function scriptedRequest(
  runId: string,
  steps: ScriptedStep[],
  extra: { output?: JsonValue; input?: JsonValue } = {},
) {
  const request: RunRequest & { runId: string } = {
    v: 1,
    runId,
    agent: { kind: 'scripted', steps, ...(extra.output === undefined ? {} : { output: extra.output }) },
    ...(extra.input === undefined ? {} : { input: extra.input }),
  };
  return request;
}

export function thoughtData(decision: Decision, step: number): EventData<'thought'> {
  return {
    step,
    model: { id: 'scripted', promptVersion: '1' },
    decision,
    usage: { inputTokens: 0, outputTokens: 0 },
    finishReason: 'stop',
  };
}

/** A run's history as the log would hold it, for folding in unit tests. */
export class History {
  readonly events: RunEvent[] = [];
  private steps = 0;

  constructor(readonly request: RunRequest & { runId: string }) {
    this.add('run_requested', { request }).add('run_started', {});
  }

  get runId(): string {
    return this.request.runId;
  }

  add<T extends EventType>(type: T, data: EventData<T>): this {
    const seq = this.events.length + 1;
    const meta = {
      id: `${this.runId}#${seq}`,
      runId: this.runId,
      ts: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(),
      correlationId: this.runId,
    };
    this.events.push({ type, v: CURRENT_EVENT_VERSIONS[type], data, meta, seq } as RunEvent);
    return this;
  }

  /** The model asked for `tool(args)` as the next step, and the intent was recorded. */
  requested(tool: string, args: JsonObject): this {
    const step = this.steps + 1;
    this.steps = step;
    const callId = `call-${step}`;
    return this.add(
      'thought',
      thoughtData({ kind: 'tool_calls', calls: [{ callId, tool, args }] }, step - 1),
    ).add('tool_call_requested', {
      callId,
      step,
      tool,
      args,
      idempotencyKey: idempotencyKey({ runId: this.runId, step, tool, args }),
    });
  }

  completed(result: JsonValue): this {
    const call = this.lastCall();
    return this.add('tool_call_completed', { ...call, result, attempt: 1, deduped: false, durationMs: 1 });
  }

  failed(message: string, retryable = false): this {
    const call = this.lastCall();
    return this.add('tool_call_failed', {
      ...call,
      error: { code: 'boom', message, retryable },
      attempt: 1,
      retryable,
    });
  }

  state(): RunState {
    return fold(this.events);
  }

  private lastCall(): { callId: string; idempotencyKey: string } {
    const intent = this.events.findLast((e) => e.type === 'tool_call_requested');
    if (intent?.type !== 'tool_call_requested') throw new Error('no tool call requested yet');
    return { callId: intent.data.callId, idempotencyKey: intent.data.idempotencyKey };
  }
}
