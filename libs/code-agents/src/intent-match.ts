import { CONTROL_TOOLS, isSecretEnvelope, type JsonObject, type JsonValue } from '@dura/contracts';
import { argsHash, canonicalJson, type CallState } from '@dura/core';
import type { Intent } from './ctx-impl';

const SHOWN = 120;

/** `tool {args}`, short enough for an error message. */
export function describeIntent(intent: { tool: string; args: JsonObject }): string {
  const args = canonicalJson(intent.args);
  return `ctx call ${intent.tool} ${args.length > SHOWN ? `${args.slice(0, SHOWN)}…` : args}`;
}

/**
 * Whether a new intent is the recorded call: same tool and same arguments hash. Arguments offloaded to the
 * object store (`argsRef`) are recorded as a stand-in, so only the tool is compared for them. A secret the
 * code passed in clear is recorded sealed (the planner seals a tool's secret fields before the thought is
 * appended, and cannot open it here), so a sealed value in the record matches whatever the code passes there.
 */
export function sameIntent(recorded: CallState, intent: Intent): boolean {
  if (recorded.tool !== intent.tool) return false;
  if (recorded.argsRef) return true;
  return (
    argsHash(recorded.args) === argsHash(intent.args) ||
    sameUpToSealed(recorded.args, intent.args) ||
    approvalBeforeMark(recorded, intent)
  );
}

/**
 * A `ctx.approve` recorded before its wait carried the verdict mark (`approval: true`) is the same call, so a
 * run waiting in one when the planner is upgraded goes on instead of stopping as non-determinism.
 */
function approvalBeforeMark(recorded: CallState, intent: Intent): boolean {
  if (intent.tool !== CONTROL_TOOLS.waitForSignal || intent.args['approval'] !== true) return false;
  if (recorded.args['approval'] !== undefined) return false;
  const { approval: _mark, ...unmarked } = intent.args;
  return argsHash(recorded.args) === argsHash(unmarked);
}

function sameUpToSealed(recorded: JsonValue, given: JsonValue): boolean {
  if (isSecretEnvelope(recorded)) return true;
  if (recorded === null || given === null || typeof recorded !== 'object' || typeof given !== 'object')
    return recorded === given;
  if (Array.isArray(recorded) || Array.isArray(given))
    return (
      Array.isArray(recorded) &&
      Array.isArray(given) &&
      recorded.length === given.length &&
      recorded.every((item, i) => sameUpToSealed(item, given[i] as JsonValue))
    );
  const keys = Object.keys(recorded);
  return (
    keys.length === Object.keys(given).length &&
    keys.every(
      (key) =>
        Object.hasOwn(given, key) && sameUpToSealed(recorded[key] as JsonValue, given[key] as JsonValue),
    )
  );
}

/** Hash of a model request: a replay asking another question is non-determinism. */
export function requestHash(request: JsonObject): string {
  return argsHash(request);
}
