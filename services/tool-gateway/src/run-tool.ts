import {
  JsonValueSchema,
  storableReason,
  unstorableTextIssue,
  unstorableTextPath,
  valueLimitProblem,
  type JsonValue,
  type ToolTask,
} from '@dura/contracts';
import type { ToolContext, ToolDefinition } from '@dura/tools';

export type ToolOutcome =
  { ok: true; result: JsonValue; durationMs: number } | { ok: false; error: ToolFailure; durationMs: number };

export interface ToolFailure {
  code: string;
  message: string;
  retryable: boolean;
  /** The tool asked for this delay before the next attempt (e.g. an HTTP Retry-After). */
  retryAfterMs?: number;
  /** The run was cancelled: the call never started, or was aborted. Never retried, never fails the run. */
  cancelled?: 'before_start' | 'while_running';
}

/** A tool's attempt timeout unless it sets `timeoutMs`. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Runs one attempt of a tool: validates the arguments, enforces the timeout through the abort signal, and
 * turns every way it can end into an outcome. `cancel` aborts the call too (its run was cancelled). Never throws.
 */
export async function runTool(
  tool: ToolDefinition,
  task: ToolTask,
  attempt: number,
  cancel?: AbortSignal,
  storeBytes?: ToolContext['storeBytes'],
): Promise<ToolOutcome> {
  const started = performance.now();
  const elapsed = (): number => performance.now() - started;
  /** A failure no retry can change: the call's arguments or the tool's result are wrong. */
  const refused = (code: string, message: string): ToolOutcome => ({
    ok: false,
    error: { code, message, retryable: false },
    durationMs: elapsed(),
  });
  const args = tool.input.safeParse(task.args);
  if (!args.success) {
    const message = `invalid arguments for ${tool.name}: ${args.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`;
    return refused('invalid_args', message);
  }
  const timeoutMs = tool.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  const signal = cancel ? AbortSignal.any([controller.signal, cancel]) : controller.signal;
  try {
    const aborted = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason as Error);
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
    const result = await Promise.race([
      tool.execute(args.data, {
        idempotencyKey: task.idempotencyKey,
        runId: task.runId,
        callId: task.callId,
        attempt,
        signal,
        ...(storeBytes ? { storeBytes } : {}),
      }),
      aborted,
    ]);
    // Checked before the (recursive) schema and before it is recorded: a result the run log could not hold
    // is the tool's failure, never an event no service can read back.
    const overLimits = valueLimitProblem(result);
    if (overLimits)
      return refused(
        'result_over_limits',
        `${tool.name} returned a result over the message limits: ${overLimits.message}`,
      );
    const unstorable = unstorableTextPath(result);
    if (unstorable)
      return refused('invalid_result', `${tool.name} returned ${unstorableTextIssue(unstorable)}`);
    const json = JsonValueSchema.safeParse(result);
    if (!json.success) return refused('invalid_result', `${tool.name} returned a value that is not JSON`);
    return { ok: true, result: json.data, durationMs: elapsed() };
  } catch (err) {
    // Whichever abort came first is the signal's reason: a timeout before a cancellation stays a timeout.
    if (cancel?.aborted && signal.reason === cancel.reason)
      return { ok: false, error: cancelledWhileRunning(tool, cancel.reason), durationMs: elapsed() };
    return { ok: false, error: describe(err, controller.signal.aborted), durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}

function cancelledWhileRunning(tool: ToolDefinition, reason: unknown): ToolFailure {
  const why = reason instanceof Error ? ` (${reason.message})` : '';
  return {
    code: 'cancelled',
    message: `run cancelled while ${tool.name} was running; the tool was sent an abort signal${why}`,
    retryable: false,
    cancelled: 'while_running',
  };
}

/** The failure of an attempt, its message made storable: a tool's error may quote anything it was sent. */
function describe(err: unknown, timedOut: boolean): ToolFailure {
  const failure = describeRaw(err, timedOut);
  return { ...failure, message: storableReason(failure.message) };
}

function describeRaw(err: unknown, timedOut: boolean): ToolFailure {
  if (timedOut) return { code: 'timeout', message: (err as Error).message, retryable: true };
  const dura = duraErrorOf(err);
  if (dura) return dura;
  // An unexpected exception from a tool: assume transient, bounded by the attempt limit.
  return { code: 'tool_error', message: err instanceof Error ? err.message : String(err), retryable: true };
}

/**
 * A `ToolError` or `DuraError` recognised by its shape, not its class: a tool module outside this checkout
 * throws the classes of its own installed copy of `@dura/tools`, which `instanceof` would not match.
 */
function duraErrorOf(err: unknown): ToolFailure | undefined {
  if (!(err instanceof Error)) return undefined;
  const { code, retryable, retryAfterMs } = err as Error &
    Partial<Record<'code' | 'retryable' | 'retryAfterMs', unknown>>;
  if (typeof code !== 'string' || typeof retryable !== 'boolean') return undefined;
  const failure: ToolFailure = { code, message: err.message, retryable };
  if (typeof retryAfterMs === 'number') failure.retryAfterMs = retryAfterMs;
  return failure;
}
