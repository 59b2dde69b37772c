import {
  CONTROL_TOOLS,
  JsonObjectSchema,
  isControlTool,
  type ApprovalPolicy,
  type JsonObject,
  type JsonValue,
} from '@dura/contracts';
import { approvalVerdict, type CallState } from '@dura/core';
import type {
  AgentTarget,
  ApprovalOutcome,
  Ctx,
  LoopRequest,
  SignalOutcome,
  SleepFor,
  ToolOptions,
} from './ctx';
import type { ModelAnswer } from './model-answer';
import { AgentMisuse, ToolFailure } from './errors';
import type { AnyCodeAgent } from './define-agent';
import { runLoop } from './loop';
import { resolveModelRequest, type ModelRequest, type ResolvedModelRequest } from './model-request';
import type { ModelAsk } from './code-step';
import type { ModelCall } from './model-call';

/** One intent a ctx call asks for; `settle` answers it from the call's recorded outcome. */
export interface Intent {
  tool: string;
  args: JsonObject;
  approval?: ApprovalPolicy;
  settle(call: CallState): void;
}

/** What the engine offers the context: the three kinds of recorded thing a ctx call can be. */
export interface Recorder {
  readonly runId: string;
  readonly agent: AnyCodeAgent;
  /** The code has returned or stopped: nothing it asks for now can be recorded. */
  readonly ended: boolean;
  intent(intent: Intent): void;
  value(kind: 'now' | 'random' | 'uuid'): number | string;
  mark(name: string): void;
  model(ask: ModelAsk, answer: (value: ModelAnswer) => void): void;
}

function failure(call: CallState): ToolFailure {
  const error = call.error ?? { code: 'tool_failed', message: 'no error was recorded' };
  return new ToolFailure(call.tool, call.callId, error);
}

function field(value: JsonValue | undefined, key: string): JsonValue | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value[key] : undefined;
}

/** What is wrong with a framework's model call, or undefined: its request must be JSON to be hashed. */
function modelCallProblem(call: ModelCall): string | undefined {
  if (typeof call?.invoke !== 'function') return 'the call has no invoke function';
  if (typeof call.model !== 'string' || call.model === '') return 'the call names no model';
  if (!Number.isInteger(call.maxTokens) || call.maxTokens <= 0) return 'maxTokens must be a positive integer';
  if (!Number.isFinite(call.inputChars) || call.inputChars < 0)
    return 'inputChars must be a size in characters';
  if (!JsonObjectSchema.safeParse(call.request).success)
    return 'the request must be a JSON object (no undefined, functions, dates or byte arrays): its hash identifies the call';
  return undefined;
}

/** The `Ctx` a code agent's `run` gets: each method turns into one recorded intent, value or model call. */
export function createCtx(recorder: Recorder): Ctx {
  const tools = recorder.agent.tools;
  const call = <T>(
    tool: string,
    args: JsonObject,
    approval: ApprovalPolicy | undefined,
    map: (call: CallState) => T,
  ): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      recorder.intent({
        tool,
        args,
        ...(approval ? { approval } : {}),
        settle: (recorded) => {
          try {
            resolve(map(recorded));
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        },
      });
    });
  const completed = (recorded: CallState): JsonValue => {
    if (recorded.status !== 'completed') throw failure(recorded);
    return recorded.result ?? null;
  };

  const waitForSignal = (
    name: string,
    options: { timeout?: number } = {},
    approval = false,
  ): Promise<SignalOutcome> =>
    call(
      CONTROL_TOOLS.waitForSignal,
      {
        name,
        ...(options.timeout === undefined ? {} : { timeoutSeconds: options.timeout }),
        // Marks the wait as a verdict, so `dura approve`, the console and MCP know to answer it.
        ...(approval ? { approval: true } : {}),
      },
      undefined,
      (recorded): SignalOutcome => {
        if (recorded.status === 'completed') return { kind: 'signal', payload: recorded.result ?? null };
        if (recorded.error?.code === 'signal_timed_out') return { kind: 'timeout' };
        throw failure(recorded);
      },
    );

  const ctx: Ctx = {
    runId: recorder.runId,
    tool(name: string, args: JsonObject, options: ToolOptions = {}) {
      if (isControlTool(name) || !tools.includes(name)) {
        const allowed = tools.join(', ') || 'none';
        const why = `ctx.tool('${name}') is not allowed: declare it in the agent's tools (declared: ${allowed})`;
        return Promise.reject(new AgentMisuse(why));
      }
      return call(name, args, options.approval, completed);
    },
    model(request: ModelRequest) {
      let resolved: ResolvedModelRequest;
      try {
        resolved = resolveModelRequest(recorder.agent, request);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      return new Promise<ModelAnswer>((resolve) => recorder.model({ request: resolved }, resolve));
    },
    modelCall(call: ModelCall) {
      const problem = modelCallProblem(call);
      if (problem) return Promise.reject(new AgentMisuse(`ctx.modelCall: ${problem}`));
      if (recorder.ended)
        return Promise.reject(
          new AgentMisuse(
            `ctx.modelCall of run ${recorder.runId} came after its code returned or stopped: a model call ` +
              'outside a Dura execution is never made; await every model call before run returns',
          ),
        );
      return new Promise<ModelAnswer>((resolve) => recorder.model({ call }, resolve));
    },
    loop(request: LoopRequest) {
      return runLoop(ctx, request);
    },
    waitForSignal: (name, options) => waitForSignal(name, options),
    async approve(name = 'approval', options = {}): Promise<ApprovalOutcome> {
      const outcome = await waitForSignal(name, options, true);
      if (outcome.kind === 'timeout') return { approved: false, reason: 'nobody answered in time' };
      return approvalVerdict(name, outcome.payload);
    },
    sleep(duration: SleepFor) {
      const args: JsonObject =
        typeof duration === 'number'
          ? { seconds: duration }
          : { until: new Date(duration.until).toISOString() };
      return call(CONTROL_TOOLS.sleep, args, undefined, (recorded) => {
        if (recorded.status !== 'completed') throw failure(recorded);
      });
    },
    invoke(agent: AgentTarget, input?: JsonValue) {
      const args = {
        agent: agent.name,
        ...(agent.version === undefined ? {} : { version: agent.version }),
        ...(input === undefined ? {} : { input }),
      };
      return call(CONTROL_TOOLS.runAgent, args, undefined, (recorded) => {
        if (recorded.status !== 'completed') throw failure(recorded);
        return field(recorded.result, 'output') ?? null;
      });
    },
    mark(name: string) {
      if (typeof name !== 'string' || name === '')
        throw new AgentMisuse(`ctx.mark takes a non-empty name, got ${JSON.stringify(name)}`);
      recorder.mark(name);
    },
    now: () => new Date(recorder.value('now')),
    random: () => recorder.value('random') as number,
    uuid: () => recorder.value('uuid') as string,
  };
  return ctx;
}
