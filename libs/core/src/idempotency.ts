import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { JsonObject, JsonValue } from '@dura/contracts';
import { canonicalJson } from './canonical-json';

interface NativeHashes {
  createHash(algorithm: 'sha256'): { update(text: string): { digest(encoding: 'hex'): string } };
}

/**
 * Node's own SHA-256 where the code runs in Node (every service), ten times faster than the portable one
 * the console's browser build falls back to; both hash the UTF-8 of the text, so they agree on every input.
 */
const native = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NativeHashes | undefined;

/** Hex SHA-256 of the UTF-8 of `text`. */
export function sha256Hex(text: string): string {
  return native
    ? native.createHash('sha256').update(text).digest('hex')
    : bytesToHex(sha256(utf8ToBytes(text)));
}

/** Hex SHA-256 of the canonical JSON of `value`: key order and whitespace never change it. */
export function jsonHash(value: JsonValue): string {
  return sha256Hex(canonicalJson(value));
}

/** Hex SHA-256 of the canonical JSON of `args`. */
export function argsHash(args: JsonObject): string {
  return jsonHash(args);
}

/**
 * The effect key of one tool call: `<runId>:<step>:<tool>:<first 32 hex of the args hash>`.
 * Deterministic, so a re-driven intent gets the same key and the gateway runs the effect once.
 */
export function idempotencyKey(parts: {
  runId: string;
  step: number;
  tool: string;
  args: JsonObject;
}): string {
  return `${parts.runId}:${parts.step}:${parts.tool}:${argsHash(parts.args).slice(0, 32)}`;
}

/** The id of the n-th event (0-based) appended by a decision made after folding up to `afterSeq`. */
export function decisionEventId(runId: string, afterSeq: number, index: number): string {
  return `${runId}@${afterSeq}.${index}`;
}

/** Call ids count steps, so they are stable across replays of the same decision. */
export function callId(step: number): string {
  return `call-${step}`;
}
