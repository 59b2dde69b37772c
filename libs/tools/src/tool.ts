import type { z } from 'zod';
import { DuraError, type JsonValue, type PayloadRef } from '@dura/contracts';
import type { RetryPolicy } from './retry-policy';
import type { SecretFields } from './secrets/secret-fields';

/**
 * How the gateway may treat a call whose outcome is unknown after a crash:
 * - `read_only`: the call changes nothing outside its result (a computation, a lookup). It may run again at
 *   any time, so its first try (a worker's drive runs it right after recording its intent, or its tool task
 *   is delivered for the first time) runs without a claim in the ledger first: one Postgres write per call
 *   (its result), not two. The first result recorded under the key is the call's result.
 * - `idempotent`: running it twice with the same key has the effect of running it once (the key reaches the
 *   external system); it may run again after a crash.
 * - `unsafe`: never runs blindly twice.
 */
export type ToolSafety = 'read_only' | 'idempotent' | 'unsafe';

/** Whether a call of the tool may run again after a crash interrupted it (`read_only` and `idempotent` tools). */
export function mayRunAgain(safety: ToolSafety): boolean {
  return safety !== 'unsafe';
}

export interface ToolContext {
  /** Pass this to the external system (header, request id): it is the same on every retry of this call. */
  idempotencyKey: string;
  runId: string;
  callId: string;
  attempt: number;
  signal: AbortSignal;
  /**
   * Stores bytes in the object store (content-addressed) and returns their reference, for binary results
   * (images, files) that should not travel in the log. Set by the gateway; absent elsewhere.
   */
  storeBytes?: (bytes: Uint8Array) => Promise<PayloadRef>;
}

export type ToolStatus =
  | { state: 'succeeded'; result: JsonValue }
  | { state: 'failed'; error: { code: string; message: string } }
  | { state: 'unknown' };

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  safety: ToolSafety;
  /**
   * What the tool answers, when it declares it. Checked where a result is written by hand (a fork's edited
   * result must match it); the gateway records what `execute` returned as it is.
   */
  output?: z.ZodType;
  /** The input as JSON Schema, when the tool brought its own (an MCP server's): models are shown it as is. */
  inputJsonSchema?: Record<string, unknown>;
  /** Upper bound for one attempt; the signal aborts when it passes. */
  timeoutMs?: number;
  retry?: RetryPolicy;
  execute(args: z.infer<S>, ctx: ToolContext): Promise<JsonValue>;
  /**
   * A human approves every call of this tool before it runs (signal `approve` / `reject` on the run). An
   * object sets the timeout and what happens when nobody answers (default: reject).
   */
  requiresApproval?: boolean | { timeoutSeconds?: number; onTimeout?: 'reject' | 'approve' | 'fail' };
  /**
   * Argument and result fields that hold secrets (dot paths, `*` for every element): sealed before they
   * reach the log, the read model, logs or spans; opened by the gateway just before `execute`.
   */
  secrets?: SecretFields;
  /**
   * Calls of this tool that may run at once across every gateway replica (a rate-limited API). Calls over
   * the limit wait and run later; `GATEWAY_TOOL_CONCURRENCY` overrides it per deployment.
   */
  concurrency?: number;
  /** Asks the external system what happened to `idempotencyKey`, for reconciling a call interrupted by a crash. */
  status?(idempotencyKey: string, ctx: { signal: AbortSignal }): Promise<ToolStatus>;
}

/** Declares a tool; the input schema validates arguments before `execute` ever sees them. */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition<S> {
  return definition;
}

/** A tool failure. `retryable` decides whether the gateway tries again (after `retryAfterMs`, when given). */
export class ToolError extends DuraError {
  readonly retryAfterMs: number | undefined;

  constructor(
    code: string,
    message: string,
    options: { retryable: boolean; retryAfterMs?: number; cause?: unknown },
  ) {
    super(code, message, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}
