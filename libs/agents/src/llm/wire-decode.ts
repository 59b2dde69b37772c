import type { z } from 'zod';
import {
  depthProblem,
  EVENT_LIMITS,
  formatIssues,
  valueLimitProblem,
  type JsonObject,
} from '@dura/contracts';
import { AttemptFailure } from './errors';
import { snippet } from './http';

/** Validates a provider's answer on decode; anything off is a malformed response, worth another attempt. */
export function decodeWire<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  // Before the (recursive) schema: an answer nested deeper than any event may hold is malformed, not a crash.
  const deep = depthProblem(value, EVENT_LIMITS.maxDepth);
  if (deep) throw new AttemptFailure('malformed', `${what} is refused: ${deep.message}`);
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new AttemptFailure(
    'malformed',
    `${what} does not have the expected shape: ${formatIssues(parsed.error).slice(0, 3).join('; ')}`,
  );
}

/** Parses one data line of a stream as JSON. */
export function parseEventData(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    throw new AttemptFailure('malformed', `a stream event is not JSON: ${snippet(data)}`);
  }
}

/** A tool call's arguments as a JSON object; an empty string stands for no arguments. */
export function toolArguments(raw: unknown, toolName: string): JsonObject {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return {};
    try {
      value = JSON.parse(raw) as unknown;
    } catch {
      throw new AttemptFailure(
        'malformed',
        `the arguments of tool call "${toolName}" are not valid JSON: ${snippet(raw)}`,
      );
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new AttemptFailure(
      'malformed',
      `the arguments of tool call "${toolName}" are not a JSON object: ${snippet(JSON.stringify(value) ?? String(value))}`,
    );
  // The arguments go into a thought event and a tool task: over the limits, the answer is malformed.
  const overLimits = valueLimitProblem(value);
  if (overLimits)
    throw new AttemptFailure(
      'malformed',
      `the arguments of tool call "${toolName}" are over the message limits: ${overLimits.message}`,
    );
  return value as JsonObject;
}

/** Normalized finish reasons; a server that says `stop` while asking for tools (some local ones do) means tools. */
export function normalizeFinish(
  raw: string | null | undefined,
  hasToolCalls: boolean,
  map: Record<string, string>,
): string {
  const mapped = raw ? (map[raw] ?? raw) : hasToolCalls ? 'tool_calls' : 'stop';
  return mapped === 'stop' && hasToolCalls ? 'tool_calls' : mapped;
}
