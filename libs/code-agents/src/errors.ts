import { DuraError, type ErrorInfo } from '@dura/contracts';

/** Marks a ToolFailure made by any copy of this package (a user's project installs its own). */
const TOOL_FAILURE = Symbol.for('dura.code-agents.ToolFailure');

/**
 * A tool (or a child run, or a rejected approval) failed for good; the agent's code may catch it.
 * `err instanceof ToolFailure` holds for a failure thrown by the planner's copy of this package too: the
 * check reads a registered symbol, not the class identity.
 */
export class ToolFailure extends DuraError {
  readonly [TOOL_FAILURE] = true;

  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TOOL_FAILURE] === true
    );
  }

  constructor(
    readonly tool: string,
    readonly callId: string,
    readonly error: ErrorInfo,
  ) {
    super(error.code, `${tool} (${callId}) failed: ${error.message}`, { retryable: false });
  }
}

/**
 * The agent's code asked for something other than what the log recorded at that position. Nothing runs past
 * it: an operator serves the code the run started with again and signals `retry`, or cancels or forks the run.
 */
export class NonDeterminism extends DuraError {
  constructor(
    readonly position: string,
    readonly recorded: string,
    readonly attempted: string,
  ) {
    super(
      'non_determinism',
      `non-determinism at ${position}: the log recorded ${recorded}, the code now asks for ${attempted}. ` +
        'Serve the code the run started with and signal retry (dura signal <run> retry), or cancel or fork the run.',
    );
  }
}

/** `run` awaited something that is not a `ctx` call (a timer, a fetch): replay cannot drive it. */
export class NotDrivenByCtx extends DuraError {
  constructor(position: string) {
    super(
      'not_driven_by_ctx',
      `the agent's code is waiting on something that is not a ctx call (at ${position}): it neither returned ` +
        'nor awaited ctx. Reach the world only through ctx (ctx.tool, ctx.sleep, ctx.model, ...).',
    );
  }
}

/** The agent's code broke a rule of the engine (an undeclared tool, an unrecordable value). */
export class AgentMisuse extends DuraError {
  constructor(message: string) {
    super('agent_misuse', message);
  }
}
