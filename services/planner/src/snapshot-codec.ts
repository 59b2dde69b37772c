import { constants, gunzipSync, gzipSync } from 'node:zlib';
import * as z from 'zod';
import { formatIssues, RunIdSchema } from '@dura/contracts';
import { sha256Hex, type RunState } from '@dura/core';
import { SnapshotStateSchema } from './snapshot-state-schema';

/**
 * Format of a stored snapshot. Bump it whenever RunState's shape or evolve's meaning changes: a snapshot of
 * another version is ignored and the run is folded from its log again (the log wins).
 */
export const SNAPSHOT_VERSION = 6;

/** One run's folded state at stream sequence `seq`, whose event there has id `eventId`. */
export interface RunSnapshot {
  v: typeof SNAPSHOT_VERSION;
  runId: string;
  seq: number;
  eventId: string;
  /** Hex SHA-256 of the canonical JSON of `state`: a snapshot whose bytes changed is refused. */
  stateHash: string;
  state: RunState;
}

const SnapshotSchema = z.strictObject({
  v: z.literal(SNAPSHOT_VERSION),
  runId: RunIdSchema,
  seq: z.number().int().positive(),
  eventId: z.string().min(1),
  stateHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256'),
  state: SnapshotStateSchema,
});

export type DecodedSnapshot = { ok: true; snapshot: RunSnapshot } | { ok: false; reason: string };

/**
 * Hex SHA-256 of a state's JSON text. JSON.parse keeps key order and JSON.stringify reproduces the text it
 * parsed, so the reader's digest of the stored state equals the writer's; any changed value changes it.
 * (Canonical JSON would also survive reordered keys, which nothing here produces, at several times the cost
 * for a long run's megabyte of state.)
 */
export function stateHash(state: unknown): string {
  return sha256Hex(JSON.stringify(state));
}

function snapshotHead(state: RunState, eventId: string, hash: string): Omit<RunSnapshot, 'state'> {
  if (state.runId === null) throw new TypeError('cannot snapshot a run that has no events');
  return { v: SNAPSHOT_VERSION, runId: state.runId, seq: state.lastSeq, eventId, stateHash: hash };
}

/** The snapshot of `state`, whose last folded event has id `eventId`. */
export function snapshotOf(state: RunState, eventId: string): RunSnapshot {
  return { ...snapshotHead(state, eventId, stateHash(state)), state };
}

/** Larger encodings are gzipped: a KV value is one NATS message, bounded by the server's max_payload (1 MiB). */
export const COMPRESS_ABOVE_BYTES = 64 * 1024;
const MAX_INFLATED_BYTES = 256 * 1024 * 1024;

/** JSON (readable with `nats kv get`), or gzipped JSON when it is larger than COMPRESS_ABOVE_BYTES. */
export function encodeSnapshot(snapshot: RunSnapshot): Uint8Array {
  const { state, ...head } = snapshot;
  return encodeText(head, JSON.stringify(state));
}

/**
 * `encodeSnapshot(snapshotOf(state, eventId))`, serializing the state once for both its hash and the text (a
 * long run's state is hundreds of KB).
 */
export function encodeSnapshotOf(state: RunState, eventId: string): Uint8Array {
  const json = JSON.stringify(state);
  return encodeText(snapshotHead(state, eventId, sha256Hex(json)), json);
}

/** The text `JSON.stringify` gives a snapshot with this head and a state of JSON `stateJson` (keys in order). */
function encodeText(head: Omit<RunSnapshot, 'state'>, stateJson: string): Uint8Array {
  const text = `${JSON.stringify(head).slice(0, -1)},"state":${stateJson}}`;
  const json = new TextEncoder().encode(text);
  return json.length > COMPRESS_ABOVE_BYTES ? gzipSync(json, { level: constants.Z_BEST_SPEED }) : json;
}

// JSON text never starts with 0x1f, so gzip's magic bytes tell the two encodings apart.
function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/**
 * Decodes a stored snapshot of `runId` and checks everything that can be checked without the log: JSON,
 * version, schema, hash, run id, and that the state really is the state at `seq`. Never throws: a snapshot
 * that fails any check is reported with the reason, and the caller folds the log instead.
 */
export function decodeSnapshot(bytes: Uint8Array, runId: string): DecodedSnapshot {
  let raw: unknown;
  try {
    const json = isGzip(bytes) ? gunzipSync(bytes, { maxOutputLength: MAX_INFLATED_BYTES }) : bytes;
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(json));
  } catch (err) {
    return { ok: false, reason: `not (gzipped) JSON: ${(err as Error).message}` };
  }
  const version = (raw as { v?: unknown } | null)?.v;
  if (version !== SNAPSHOT_VERSION)
    return {
      ok: false,
      reason: `snapshot version ${String(version)}, this planner reads ${SNAPSHOT_VERSION}`,
    };
  const parsed = SnapshotSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: `invalid: ${formatIssues(parsed.error).join('; ')}` };
  // The schema only validates; the state that resumes is the one stored, exactly what the hash covers.
  // (A parsed copy would lose what JSON keeps and a schema may not, e.g. a tool result's own "__proto__" key.)
  const stored = (raw as { state: RunState }).state;
  const snapshot = { ...(parsed.data as RunSnapshot), state: stored };
  // Hash what was stored, not what the schema let through, so any changed byte of the state is caught.
  const actual = stateHash(stored);
  if (actual !== snapshot.stateHash)
    return { ok: false, reason: `state hash ${actual} does not match the recorded ${snapshot.stateHash}` };
  if (snapshot.runId !== runId || snapshot.state.runId !== runId)
    return { ok: false, reason: `snapshot is of run ${snapshot.runId} (state ${snapshot.state.runId})` };
  if (snapshot.state.lastSeq !== snapshot.seq)
    return {
      ok: false,
      reason: `snapshot seq ${snapshot.seq} but its state ends at ${snapshot.state.lastSeq}`,
    };
  return { ok: true, snapshot };
}
