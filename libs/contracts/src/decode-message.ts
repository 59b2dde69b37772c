import type { z } from 'zod';
import { ContractViolation } from './errors';
import { formatIssues } from './format-issues';
import {
  EVENT_LIMITS,
  MESSAGE_LIMITS,
  scanJson,
  type LimitProblem,
  type MessageLimits,
} from './message-limits';
import { storableReason, unstorableTextIssue, unstorableTextPath } from './storable-text';

/** Why a message was refused: a stable code, a sentence saying what to do, and where in the message. */
export interface DecodeFailure {
  /** A `LimitProblem` code, `invalid_utf8`, `bad_json`, or the caller's code for a schema or text failure. */
  code: string;
  message: string;
  issues: string[];
}

export type Decoded<T> =
  { ok: true; value: T; runId?: string } | { ok: false; failure: DecodeFailure; runId?: string };

export interface DecodeOptions {
  limits?: MessageLimits;
  /** The code of a message that is JSON but not of the schema, or holds text no store can keep. */
  invalidCode?: string;
}

/**
 * How tasks (decide, tool, timer) are decoded: the planner builds them from what the log holds (a tool's
 * result piped into the next call's arguments), so they keep the run log's limits, not a request's.
 */
export const TASK_DECODE: Readonly<DecodeOptions> = Object.freeze({ limits: EVENT_LIMITS });

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The one way a service reads a message: size, UTF-8, nesting depth, string and array sizes and key counts
 * first (a linear scan, nothing recursive), then JSON.parse (iterative in V8), then text every store can hold,
 * then the schema. Never throws; a failure's text is safe to store and show whatever the message held, and
 * `runId` names the message's top-level run id when it has a valid one, even when the rest is refused.
 */
export function decodeMessage<S extends z.ZodType>(
  bytes: Uint8Array,
  schema: S,
  what: string,
  options: DecodeOptions = {},
): Decoded<z.infer<S>> {
  const scan = scanJson(bytes, options.limits ?? MESSAGE_LIMITS);
  const runId = scan.runId === undefined ? {} : { runId: scan.runId };
  const refuse = (code: string, message: string, issues: string[] = []): Decoded<z.infer<S>> => ({
    ok: false,
    failure: {
      code,
      message: storableReason(`${what} ${message}`),
      issues: issues.map((issue) => storableReason(issue)),
    },
    ...runId,
  });
  if (scan.problem) return refuse(scan.problem.code, `refused: ${scan.problem.message}`);
  let text: string;
  try {
    text = fatalUtf8.decode(bytes);
  } catch {
    return refuse('invalid_utf8', 'is not valid UTF-8; send JSON encoded as UTF-8');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    // V8 quotes the text around the error, which may hold anything: the reason is made storable above.
    return refuse('bad_json', `is not valid JSON: ${(err as Error).message}`);
  }
  const invalid = options.invalidCode ?? 'invalid_message';
  const unstorable = unstorableTextPath(body);
  if (unstorable)
    return refuse(invalid, 'holds text that cannot be stored', [unstorableTextIssue(unstorable)]);
  const parsed = schema.safeParse(body);
  if (!parsed.success) return refuse(invalid, 'does not match its schema', formatIssues(parsed.error));
  return { ok: true, value: parsed.data, ...runId };
}

/**
 * The first limit `value` breaks once written as JSON, or undefined: what a service checks before it puts a
 * value it did not decode itself (a tool's result, a model's arguments) into an event. Never recurses past
 * `maxDepth`, so a value nested deeper than the call stack is reported, not thrown.
 */
export function valueLimitProblem(
  value: unknown,
  limits: MessageLimits = MESSAGE_LIMITS,
): LimitProblem | undefined {
  const deep = depthProblem(value, limits.maxDepth);
  if (deep) return deep;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    return {
      code: 'message_too_large',
      message: `the value cannot be written as JSON: ${(err as Error).message}`,
    };
  }
  return json === undefined ? undefined : scanJson(new TextEncoder().encode(json), limits).problem;
}

/** `decodeMessage` for a consumer loop: the value, or a terminal `ContractViolation` with the failure's code. */
export function decodeOrThrow<S extends z.ZodType>(
  bytes: Uint8Array,
  schema: S,
  what: string,
  options: DecodeOptions = {},
): z.infer<S> {
  const decoded = decodeMessage(bytes, schema, what, options);
  if (decoded.ok) return decoded.value;
  const { message, issues, code } = decoded.failure;
  // Not JSON or not of the schema keep the contract's code; a broken limit or encoding says which.
  const generic = code === 'invalid_message' || code === 'bad_json';
  throw new ContractViolation(message, issues, undefined, generic ? undefined : code);
}

/** `too_deep` when `value` nests arrays and objects deeper than `maxDepth` (a cycle counts as too deep). */
export function depthProblem(value: unknown, maxDepth: number): LimitProblem | undefined {
  // An explicit stack: the point is to look at values nested deeper than the call stack goes.
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [node, depth] = item;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > maxDepth)
      return {
        code: 'too_deep',
        message: `the value nests arrays and objects deeper than ${maxDepth} levels; flatten it or pass it by reference`,
      };
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return undefined;
}
