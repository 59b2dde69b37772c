// A planner in miniature for the engine's tests: the real fold and decider of @dura/core, a code agent
// deciding by replay, tools and a model as plain functions. What it appends is what the planner appends.
import {
  DuraError,
  type EventData,
  type EventType,
  type JsonObject,
  type JsonValue,
  type RunEvent,
} from '@dura/contracts';
import { evolve, initialRunState, nextAction, type RunState } from '@dura/core';
import { runEvent } from '@dura/core/testing';
import { type AnyCodeAgent, type CodeModelSettingsInput, type ModelAnswer } from '../index';
import {
  decideNext,
  pinnedVersion,
  recordedAnswer,
  startExecution,
  withModelAnswer,
  type CodeStep,
  type Execution,
  type Fresh,
  type Frontier,
  type ResolvedModelRequest,
} from '../engine';

export type ToolFn = (args: JsonObject) => JsonValue;

export interface World {
  tools?: Record<string, ToolFn>;
  /** The model: its text, or a whole answer (tool calls for `ctx.loop`). */
  model?: (request: ResolvedModelRequest) => string | ModelAnswer;
  agents?: Record<string, AnyCodeAgent>;
  fresh?: Fresh;
  /** Fire the timeouts of signal waits when the run has nothing else to do. */
  timeOutSignals?: boolean;
  /** Keep one live execution between decide tasks instead of replaying from the start. */
  live?: boolean;
}

export type Ending =
  | { kind: 'finished'; state: RunState }
  | { kind: 'waiting'; state: RunState }
  | { kind: 'blocked'; state: RunState; error: Extract<CodeStep, { kind: 'blocked' }>['error'] };

/** Model settings for test agents that call `ctx.model` (the world's `model` answers them). */
export const TEST_MODEL: CodeModelSettingsInput = { provider: 'openai', model: 'fake-1' };

/** Deterministic fresh values: a clock that ticks a second per read, a counter for random and ids. */
export function countingFresh(): Fresh & { reads: number } {
  const fresh = {
    reads: 0,
    now: () => Date.UTC(2026, 0, 1) + 1000 * ++fresh.reads,
    random: () => (++fresh.reads % 97) / 97,
    uuid: () => `00000000-0000-4000-8000-${String(++fresh.reads).padStart(12, '0')}`,
  };
  return fresh;
}

export function answer(content: string): ModelAnswer {
  return {
    content,
    usage: { inputTokens: 10, outputTokens: content.length },
    model: { id: 'fake-1', promptVersion: 'p1' },
    finishReason: 'stop',
    costUsd: 0.001,
  };
}

export class SimRun {
  readonly events: RunEvent[] = [];
  state: RunState = initialRunState();
  modelCalls = 0;
  /** Time spent in the engine (decide tasks) alone, for the benchmark. */
  decideMs = 0;
  readonly toolCalls: string[] = [];
  private execution: Execution | undefined;

  constructor(
    readonly agent: AnyCodeAgent,
    readonly world: World,
    readonly runId = 'run-1',
    input?: JsonValue,
  ) {
    const request = {
      v: 1 as const,
      runId,
      agent: { kind: 'agent' as const, name: agent.name, version: agent.version },
      ...(input === undefined ? {} : { input }),
    };
    this.append('run_requested', { request });
  }

  append<T extends EventType>(type: T, data: EventData<T>): void {
    const event = runEvent(type, data, { seq: this.events.length + 1, runId: this.runId }) as RunEvent;
    this.events.push(event);
    this.state = evolve(this.state, event);
  }

  signal(name: string, payload?: JsonValue): void {
    const signalId = `sig-${this.events.length}`;
    this.append('signal_received', { signalId, name, ...(payload === undefined ? {} : { payload }) });
  }

  /** Drives the run until it finishes, waits on the outside world, or blocks. */
  async drive(agent = this.agent): Promise<Ending> {
    let frontier: Frontier | undefined;
    for (let guard = 0; guard < 100_000; guard += 1) {
      const action = nextAction(this.state);
      switch (action.kind) {
        case 'start':
          this.append('run_started', { pinned: pinnedVersion(agent) });
          break;
        case 'record':
          for (const event of action.events) this.append(event.type, event.data);
          break;
        case 'dispatch':
          if (!(await this.dispatch(action))) return { kind: 'waiting', state: this.state };
          break;
        case 'idle':
          return action.reason === 'finished'
            ? { kind: 'finished', state: this.state }
            : { kind: 'waiting', state: this.state };
        case 'decide': {
          const started = performance.now();
          const step = await this.decide(agent, frontier);
          this.decideMs += performance.now() - started;
          frontier = undefined;
          if (step.kind === 'blocked') return { kind: 'blocked', state: this.state, error: step.error };
          if (step.kind === 'suspended') return { kind: 'waiting', state: this.state };
          if (step.kind === 'model') {
            this.modelCalls += 1;
            frontier = withModelAnswer(step, await this.answer(step, agent));
          } else this.append('thought', step.thought);
        }
      }
    }
    throw new Error('the run did not settle');
  }

  /** A framework's call is made in place (its own client); a `ctx.model` request is the world's to answer. */
  private async answer(
    step: Extract<CodeStep, { kind: 'model' }>,
    agent: AnyCodeAgent,
  ): Promise<ModelAnswer> {
    if (step.call) return recordedAnswer(await step.call.invoke(), agent, undefined);
    const given = this.world.model?.(step.request) ?? '';
    return typeof given === 'string' ? answer(given) : given;
  }

  private decide(agent: AnyCodeAgent, frontier: Frontier | undefined): Promise<CodeStep> {
    const options = { fresh: this.world.fresh ?? countingFresh(), ...(frontier ? { frontier } : {}) };
    if (!this.world.live) return decideNext(agent, this.state, options);
    this.execution ??= startExecution(agent, this.runId);
    return this.execution.advance(this.state, options);
  }

  /** The gateway, the timer service and child runs; false when nothing could move. */
  private async dispatch(action: Extract<ReturnType<typeof nextAction>, { kind: 'dispatch' }>) {
    const before = this.events.length;
    for (const call of action.calls) this.runTool(call.callId, call.tool, call.args, call.idempotencyKey);
    for (const wait of action.timers) {
      if (wait.kind === 'timer' || (wait.kind === 'signal' && this.world.timeOutSignals))
        this.append('timer_fired', { waitId: wait.waitId });
    }
    for (const child of action.children) {
      const agent = this.world.agents?.[child.request.agent.kind === 'agent' ? child.request.agent.name : ''];
      if (!agent) throw new Error(`no agent for child ${child.childRunId}`);
      const sub = new SimRun(agent, this.world, child.childRunId, child.request.input);
      const end = await sub.drive();
      const status = end.state.status === 'completed' ? 'completed' : 'failed';
      const output = end.state.output;
      this.append('child_run_completed', {
        childRunId: child.childRunId,
        status,
        ...(output === undefined ? {} : { output }),
      });
    }
    return this.events.length > before;
  }

  private runTool(callId: string, tool: string, args: JsonObject, idempotencyKey: string): void {
    this.toolCalls.push(tool);
    const base = { callId, idempotencyKey, attempt: 1 };
    try {
      const fn = this.world.tools?.[tool];
      if (!fn) throw new DuraError('unknown_tool', `no tool ${tool}`);
      this.append('tool_call_completed', { ...base, result: fn(args), deduped: false, durationMs: 1 });
    } catch (err) {
      const error = err instanceof DuraError ? err.toJSON() : { code: 'tool_error', message: String(err) };
      this.append('tool_call_failed', {
        ...base,
        error: { code: error.code, message: error.message, retryable: false },
        retryable: false,
      });
    }
  }
}

/** The event types of a log, for readable assertions. */
export function types(events: readonly RunEvent[]): string[] {
  return events.map((event) => event.type);
}
