import type { ApprovalPolicy, ChatMessage, JsonObject, JsonValue } from '@dura/contracts';
import type { ModelRequest } from './model-request';
import type { ModelAnswer } from './model-answer';
import type { ModelCall } from './model-call';

/** What `ctx.loop` takes: a model request whose tools the model may call, turn after turn, up to `maxTurns`. */
export interface LoopRequest {
  system?: string;
  /** The task, as the first user message. */
  prompt?: string;
  messages?: ChatMessage[];
  /** Declared tools the model may call; each call is a `ctx.tool` call (in parallel when it asks several). */
  tools: string[];
  /** The most model turns; the loop returns `finished: false` when the model still asks for tools then. */
  maxTurns: number;
  model?: string;
  maxTokens?: number;
  temperature?: number;
}

/** How `ctx.loop` ended: the model's last text, the whole conversation, and whether it answered in bound. */
export interface LoopResult {
  text: string;
  messages: ChatMessage[];
  /** Model turns taken. */
  turns: number;
  /** True when the model answered without tool calls; false when `maxTurns` was reached first. */
  finished: boolean;
}

/** A duration in seconds, or a moment to wake up at. */
export type SleepFor = number | { until: Date | string };

/** How `ctx.waitForSignal` ended: the signal's payload, or the timeout. */
export type SignalOutcome = { kind: 'signal'; payload: JsonValue } | { kind: 'timeout' };

/**
 * What a person answered to `ctx.approve`. Only the payload `{ approved: true }` approves; `approved: false`
 * refuses with the `reason` given, and any other payload (`{}`, `null`, `"yes"`, `{ approved: "true" }`) is a
 * refusal whose `reason` names what arrived.
 */
export interface ApprovalOutcome {
  approved: boolean;
  reason?: string;
}

export interface ToolOptions {
  /** A human approves this call (signals `approve` / `reject`) before the gateway runs it. */
  approval?: ApprovalPolicy;
}

/** A code agent to run as a child: a definition, or a registered agent's name and version. */
export type AgentTarget = { name: string; version?: string };

/**
 * The only door a code agent has to the world. Every call is recorded in the run's log before anything acts
 * on it and answered from the log when `run` is replayed, so `run` must reach the world through `ctx` only:
 * no `Date.now()`, `Math.random()`, `fetch` or timers of its own.
 */
export interface Ctx {
  /** The run this execution belongs to. */
  readonly runId: string;

  /**
   * Calls a tool through the gateway (under its idempotency key, so the effect happens once) and resolves to
   * its result; throws a `ToolFailure` when the tool finally fails.
   *
   * @example
   * const invoice = await ctx.tool('billing.charge', { customer: 'c-1', cents: 1200 });
   * @example
   * // Several calls at once become one decision with parallel intents.
   * const [a, b] = await Promise.all([ctx.tool('web.search', { q: 'x' }), ctx.tool('web.search', { q: 'y' })]);
   */
  tool(name: string, args: JsonObject, options?: ToolOptions): Promise<JsonValue>;

  /**
   * Asks the model once (the agent's `model` settings); the answer is recorded with its usage and cost in the
   * step's thought and never asked again once recorded. The budget for its worst case is reserved first.
   *
   * @example
   * const plan = await ctx.model({ system: 'Plan the research.', prompt: topic });
   * @example
   * const next = await ctx.model({ messages, tools: ['web.search'], maxTokens: 256 });
   * for (const call of next.toolCalls ?? []) console.log(call.name, call.arguments);
   */
  model(request: ModelRequest): Promise<ModelAnswer>;

  /**
   * A model call an agent framework makes through its own client (the AI SDK's model, say), recorded as
   * `ctx.model` records one: the request's hash, the answer with its usage and cost, the budget for its worst
   * case reserved first. `invoke` runs only past the recorded frontier (in the planner, streaming text to the
   * run's live tokens); on replay the recorded answer comes back and `invoke` is never called. Adapters such
   * as `@dura/ai-sdk` use it; agent code calls `ctx.model`.
   *
   * @example
   * const answer = await ctx.modelCall({ request: { framework: 'mine', prompt }, model: 'gpt-4o-mini',
   *   maxTokens: 256, inputChars: prompt.length, invoke: async (live) => myClient.ask(prompt, live) });
   */
  modelCall(call: ModelCall): Promise<ModelAnswer>;

  /**
   * The LLM tool loop as one part of a larger program: model turns (`ctx.model`) and the tool calls the model
   * asks for (`ctx.tool`, in parallel when it asks several), until it answers without tool calls or
   * `maxTurns` is reached. A failed tool call is shown to the model as an error result.
   *
   * @example
   * const { text } = await ctx.loop({ system: 'Research, then answer.', prompt: question,
   *   tools: ['web.search'], maxTurns: 8 });
   */
  loop(request: LoopRequest): Promise<LoopResult>;

  /**
   * Waits durably for a named signal (`dura signal <run> <name>`), at most `timeout` seconds when given.
   *
   * @example
   * const reply = await ctx.waitForSignal('reply', { timeout: 3600 });
   * if (reply.kind === 'timeout') return { answered: false };
   */
  waitForSignal(name: string, options?: { timeout?: number }): Promise<SignalOutcome>;

  /**
   * Waits for a person's verdict, sent as the signal `name` with payload `{ approved, reason? }`
   * (`dura approve <run>` sends `{ approved: true }`, `dura reject <run> --reason TEXT` a refusal). Fails
   * closed: only `approved: true` approves; any other payload, and a timeout, count as a refusal.
   *
   * @example
   * const verdict = await ctx.approve('publish', { timeout: 86_400 });
   * if (!verdict.approved) return { published: false, reason: verdict.reason };
   */
  approve(name?: string, options?: { timeout?: number }): Promise<ApprovalOutcome>;

  /**
   * Sleeps durably: the run holds no process while it waits.
   *
   * @example
   * await ctx.sleep(600);
   * await ctx.sleep({ until: '2027-01-01T09:00:00Z' });
   */
  sleep(duration: SleepFor): Promise<void>;

  /**
   * Runs another agent as a child run and resolves to its output; throws a `ToolFailure` when it fails.
   *
   * @example
   * const summary = await ctx.invoke(summarizer, { text });
   */
  invoke(agent: AgentTarget, input?: JsonValue): Promise<JsonValue>;

  /**
   * Records a named point in the current step (an agent framework's handoff, a phase of the code), shown
   * among the step's facts on the console's waterfall. Nothing acts on it; on replay the same mark must come
   * at the same place, like any recorded value.
   *
   * @example
   * ctx.mark('handoff: triage → refunds');
   */
  mark(name: string): void;

  /** The time, recorded once and replayed: use it instead of `Date.now()`. */
  now(): Date;
  /** A number in [0, 1), recorded once and replayed: use it instead of `Math.random()`. */
  random(): number;
  /** A random UUID, recorded once and replayed. */
  uuid(): string;
}
