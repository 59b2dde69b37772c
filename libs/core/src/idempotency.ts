import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { JsonObject, JsonValue } from '@dura/contracts';
import { canonicalJson } from './canonical-json';

/** Hex SHA-256 of the canonical JSON of `value`: key order and whitespace never change it. */
export function jsonHash(value: JsonValue): string {
  return bytesToHex(sha256(utf8ToBytes(canonicalJson(value))));
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
