/**
 * The shape every message a service consumes must keep, checked before anything recursive touches it (zod,
 * canonical JSON, the fold, structuredClone and Postgres jsonb all recurse; only V8's JSON.parse does not).
 */
export interface MessageLimits {
  /** Bytes of the whole message (the NATS server's default max_payload). */
  maxBytes: number;
  /** Levels of arrays and objects, the outermost counting 1. */
  maxDepth: number;
  /** Bytes of one string or key as written in the JSON text (escapes included). */
  maxStringBytes: number;
  /** Elements of one array. */
  maxArrayLength: number;
  /** Keys of one object. */
  maxObjectKeys: number;
}

/** Limits of a message from outside: a request, a fork, a signal, a task, an HTTP body. */
export const MESSAGE_LIMITS: Readonly<MessageLimits> = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 64,
  maxStringBytes: 512 * 1024,
  maxArrayLength: 100_000,
  maxObjectKeys: 10_000,
});

/**
 * Levels an event adds around what a message brought in (`{data: {request: {input: ...}}}`, a tool result
 * inside `{data: {result: ...}}`): whatever a message may hold, its event may hold too.
 */
export const EVENT_ENVELOPE_DEPTH = 8;

/** Limits of an event on the run log, as appended by the services and as read back by the planner and projector. */
export const EVENT_LIMITS: Readonly<MessageLimits> = Object.freeze({
  ...MESSAGE_LIMITS,
  maxDepth: MESSAGE_LIMITS.maxDepth + EVENT_ENVELOPE_DEPTH,
});

/** A limit a message breaks: a stable code and a sentence saying what to do. */
export interface LimitProblem {
  code: 'message_too_large' | 'too_deep' | 'string_too_long' | 'array_too_long' | 'too_many_keys';
  message: string;
}

export interface JsonScan {
  /** The first limit broken, in the order of the text. */
  problem?: LimitProblem;
  /** The value of a top-level `"runId"` string that looks like a run id (no escapes), if there is one. */
  runId?: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const RUN_ID_KEY = [0x72, 0x75, 0x6e, 0x49, 0x64]; // "runId"
const RUN_ID_TEXT = /^[A-Za-z0-9_-]{1,128}$/;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function sameBytes(bytes: Uint8Array, start: number, end: number, expected: readonly number[]): boolean {
  if (end - start !== expected.length) return false;
  for (let i = 0; i < expected.length; i += 1) if (bytes[start + i] !== expected[i]) return false;
  return true;
}

/**
 * One pass over JSON text as bytes, outside strings only counting brackets, commas and colons: finds the
 * first limit it breaks and a top-level run id, in time linear in its length and memory bounded by
 * `maxDepth`. It never parses, so it works on text that is not valid JSON (nor valid UTF-8) too.
 */
export function scanJson(bytes: Uint8Array, limits: MessageLimits = MESSAGE_LIMITS): JsonScan {
  const out: JsonScan = {};
  const fail = (problem: LimitProblem): void => void (out.problem ??= problem);
  if (bytes.length > limits.maxBytes)
    fail({
      code: 'message_too_large',
      message: `the message is ${bytes.length} bytes, over the limit of ${limits.maxBytes}; pass large data by reference`,
    });
  // Per open container up to maxDepth: whether it is an object, and its separators (commas or colons).
  const isObject: boolean[] = [];
  const separators: number[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let stringStart = 0;
  let topObject = false;
  const first = firstToken(bytes);
  // Top-level key tracking: the last string closed at depth 1, whether it was followed by a colon.
  let lastStart = -1;
  let lastEnd = -1;
  let awaitingRunId = false;
  let capture = false;
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i] as number;
    if (inString) {
      if (escaped) escaped = false;
      else if (byte === BACKSLASH) escaped = true;
      else if (byte === QUOTE) {
        inString = false;
        const length = i - stringStart - 1;
        if (length > limits.maxStringBytes)
          fail({
            code: 'string_too_long',
            message: `a string at byte ${stringStart} is ${length} bytes, over the limit of ${limits.maxStringBytes}; pass large text by reference`,
          });
        if (depth === 1 && topObject) {
          if (capture) {
            const text = new TextDecoder().decode(bytes.subarray(stringStart + 1, i));
            if (RUN_ID_TEXT.test(text)) out.runId = text;
            else delete out.runId;
          }
          lastStart = stringStart + 1;
          lastEnd = i;
        }
        capture = false;
      }
      continue;
    }
    if (isSpace(byte)) continue;
    if (depth === 1 && topObject) {
      if (awaitingRunId) capture = byte === QUOTE;
      awaitingRunId = false;
      if (byte === COLON) awaitingRunId = sameBytes(bytes, lastStart, lastEnd, RUN_ID_KEY);
    }
    if (byte === QUOTE) {
      inString = true;
      stringStart = i;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (depth === 0 && i === first) topObject = byte === OPEN_OBJECT;
      depth += 1;
      if (depth > limits.maxDepth)
        fail({
          code: 'too_deep',
          message: `the message nests arrays and objects deeper than ${limits.maxDepth} levels (at byte ${i}); flatten the data or pass it by reference`,
        });
      else {
        isObject[depth - 1] = byte === OPEN_OBJECT;
        separators[depth - 1] = 0;
      }
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth = Math.max(0, depth - 1);
    } else if ((byte === COMMA || byte === COLON) && depth > 0 && depth <= limits.maxDepth) {
      const level = depth - 1;
      const objectLevel = isObject[level] === true;
      // An array of n elements has n - 1 commas; an object of n keys has n colons.
      if (objectLevel ? byte !== COLON : byte !== COMMA) continue;
      const count = (separators[level] = (separators[level] ?? 0) + 1) + (objectLevel ? 0 : 1);
      if (objectLevel && count > limits.maxObjectKeys)
        fail({
          code: 'too_many_keys',
          message: `an object at byte ${i} has more than ${limits.maxObjectKeys} keys; pass large data by reference`,
        });
      else if (!objectLevel && count > limits.maxArrayLength)
        fail({
          code: 'array_too_long',
          message: `an array at byte ${i} has more than ${limits.maxArrayLength} elements; pass large data by reference`,
        });
    }
  }
  return out;
}

function firstToken(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length && isSpace(bytes[i] as number)) i += 1;
  return i;
}
