import { z } from 'zod';
import { scanJson } from './message-limits';

/** A run id is one NATS subject token: letters, digits, `_` and `-` only, so `dura.run.<runId>` is always valid. */
export const RunIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(
    /^[A-Za-z0-9_-]+$/,
    'run id may contain only letters, digits, "_" and "-" (it becomes a NATS subject token)',
  );

/** Tool names are dotted lower-case words, e.g. `http.request`; each dot-separated part is a subject token. */
export const ToolNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(
    /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)*$/,
    'tool name must be dotted lower-case words, e.g. "http.request"',
  );

export const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(JsonValueSchema),
    z.record(z.string(), JsonValueSchema),
  ]),
);

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export const JsonObjectSchema: z.ZodType<JsonObject> = z.record(z.string(), JsonValueSchema);

/** The valid `runId` of a JSON message body, if it has one: how dead letters of any message name their run. */
export function runIdInJson(text: string | Uint8Array): string | undefined {
  // A scan, not a parse: it finds the run id of a message too deep, too large or not JSON at all.
  return scanJson(typeof text === 'string' ? new TextEncoder().encode(text) : text).runId;
}
