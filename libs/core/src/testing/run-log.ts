import {
  CURRENT_EVENT_VERSIONS,
  type Decision,
  type EventData,
  type EventMeta,
  type EventType,
  type JsonObject,
  type JsonValue,
  type RunEvent,
  type RunEventOf,
  type ScriptedStep,
  type ToolCall,
} from '@dura/contracts';
import { callId, idempotencyKey } from '../idempotency';
import { SpecificationFailed } from './specification';

const EPOCH = Date.UTC(2025, 0, 1);

/** A run event with deterministic meta: ids and time derive from the run id and the sequence. */
export function runEvent<T extends EventType>(
  type: T,
  data: EventData<T>,
  at: { seq: number; runId?: string } & Partial<EventMeta>,
): RunEventOf<T> {
  const { seq, runId = 'run-1', ...rest } = at;
  const meta: EventMeta = {
    id: `${runId}#${seq}`,
    runId,
    ts: new Date(EPOCH + seq * 1000).toISOString(),
    correlationId: runId,
    ...(seq > 1 ? { causationId: `${runId}#${seq - 1}` } : {}),
    ...rest,
  };
  return { type, v: CURRENT_EVENT_VERSIONS[type], data, meta, seq };
}

/** `run_requested` data for a scripted agent. */
export function requestedData(
  runId: string,
  steps: ScriptedStep[] = [],
  input?: JsonValue,
): EventData<'run_requested'> {
  return {
    request: { v: 1, runId, agent: { kind: 'scripted', steps }, ...(input === undefined ? {} : { input }) },
  };
}

/** `thought` data recording `decision`. */
export function thoughtData(decision: Decision, step = 0): EventData<'thought'> {
  return {
    step,
    model: { id: 'scripted', promptVersion: 'test' },
    decision,
    usage: { inputTokens: 10, outputTokens: 5 },
    finishReason: decision.kind === 'tool_calls' ? 'tool_calls' : 'stop',
  };
}

/**
 * Builds a run's log one event at a time, with increasing sequences (optionally with gaps, as on a shared
 * stream), call ids and steps numbered as the planner numbers them, and real idempotency keys.
 */
export class RunLog {
  readonly events: RunEvent[] = [];
  private steps = 0;
  private open: ToolCall[] = [];
  private gapIndex = 0;

  constructor(
    readonly runId = 'run-1',
    private readonly gaps: readonly number[] = [],
  ) {}

  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  /** Tool-call steps recorded so far; the next intent is step `stepCount + 1`. */
  get stepCount(): number {
    return this.steps;
  }

  /** The event that would come next, not appended. */
  next<T extends EventType>(
    type: T,
    data: EventData<T>,
    overrides: Partial<EventMeta> & { seq?: number } = {},
  ) {
    const gap = this.gaps.length === 0 ? 0 : (this.gaps[this.gapIndex % this.gaps.length] ?? 0);
    return runEvent(type, data, { seq: this.lastSeq + 1 + gap, runId: this.runId, ...overrides });
  }

  add<T extends EventType>(type: T, data: EventData<T>): this {
    this.events.push(this.next(type, data) as RunEvent);
    this.gapIndex += 1;
    return this;
  }

  request(steps: ScriptedStep[] = [], input?: JsonValue): this {
    return this.add('run_requested', requestedData(this.runId, steps, input));
  }

  start(): this {
    return this.add('run_started', {});
  }

  /** Records a thought asking for `calls`, numbered after the steps recorded so far. */
  think(calls: { tool: string; args: JsonObject }[]): this {
    this.open = calls.map((call, i) => ({ callId: callId(this.steps + i + 1), ...call }));
    return this.add('thought', thoughtData({ kind: 'tool_calls', calls: [...this.open] }, this.steps));
  }

  /** Records the intents of the open thought, all or the first `count` not yet recorded. */
  intents(count = this.open.length): this {
    for (const call of this.open.splice(0, count)) {
      this.steps += 1;
      const key = idempotencyKey({ runId: this.runId, step: this.steps, tool: call.tool, args: call.args });
      this.add('tool_call_requested', { ...call, step: this.steps, idempotencyKey: key });
    }
    return this;
  }

  /** The recorded intent of `id`. */
  intent(id: string): EventData<'tool_call_requested'> {
    const found = this.events.find((e) => e.type === 'tool_call_requested' && e.data.callId === id);
    if (found?.type !== 'tool_call_requested') throw new SpecificationFailed(`no intent for ${id}`);
    return found.data;
  }

  complete(id: string, result: JsonValue = { ok: true }, attempt = 1, deduped = false): this {
    const { idempotencyKey: key } = this.intent(id);
    return this.add('tool_call_completed', {
      callId: id,
      idempotencyKey: key,
      result,
      attempt,
      deduped,
      durationMs: 12,
    });
  }

  fail(id: string, retryable: boolean, attempt = 1): this {
    const { idempotencyKey: key } = this.intent(id);
    const error = { code: retryable ? 'timeout' : 'bad_request', message: 'tool failed', retryable };
    return this.add('tool_call_failed', { callId: id, idempotencyKey: key, error, attempt, retryable });
  }

  /** Records a final `complete` thought and the completion it implies. */
  finish(output: JsonValue = 'done'): this {
    return this.add('thought', thoughtData({ kind: 'complete', output }, this.steps)).add('run_completed', {
      output,
    });
  }

  /** Appends `event`'s data again under a new sequence, as a relay retrying after the dedupe window would. */
  redeliver(event: RunEvent): this {
    return this.add(event.type, event.data);
  }

  snapshot(): this {
    return this.add('snapshot_taken', { atSeq: this.lastSeq });
  }
}
