import type { ApprovalPolicy, JsonObject, JsonValue, Usage } from '@dura/contracts';

/** What `ctx.model` sends: the planner's model adapter reads it; the engine only hashes and records it. */
export type ModelRequest = JsonObject;

/** The model's answer as recorded: usage and cost are settled against the run's budgets in the thought. */
export interface ModelAnswer {
  content: string;
  usage: Usage;
  /** Which model answered, and under which prompt version. */
  model: { id: string; promptVersion: string };
  finishReason: string;
  costUsd?: number;
}

/** A duration in seconds, or a moment to wake up at. */
export type SleepFor = number | { until: Date | string };

/** How `ctx.waitForSignal` ended: the signal's payload, or the timeout. */
export type SignalOutcome = { kind: 'signal'; payload: JsonValue } | { kind: 'timeout' };

/** What a person answered to `ctx.approve`. A bare signal (no `approved` field) counts as consent. */
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
   * Asks the model once; the answer is recorded with its usage and cost in the step's thought and never asked
   * again once recorded.
   *
   * @example
   * const plan = await ctx.model({ system: 'Plan the research.', messages: [{ role: 'user', content: topic }] });
   */
  model(request: ModelRequest): Promise<ModelAnswer>;

  /**
   * Waits durably for a named signal (`dura signal <run> <name>`), at most `timeout` seconds when given.
   *
   * @example
   * const reply = await ctx.waitForSignal('reply', { timeout: 3600 });
   * if (reply.kind === 'timeout') return { answered: false };
   */
  waitForSignal(name: string, options?: { timeout?: number }): Promise<SignalOutcome>;

  /**
   * Waits for a person's verdict, sent as the signal `name` with payload `{ approved, reason? }`.
   * A timeout counts as a refusal.
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

  /** The time, recorded once and replayed: use it instead of `Date.now()`. */
  now(): Date;
  /** A number in [0, 1), recorded once and replayed: use it instead of `Math.random()`. */
  random(): number;
  /** A random UUID, recorded once and replayed. */
  uuid(): string;
}
