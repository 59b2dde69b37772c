import { CONTROL_TOOLS, type JsonObject } from '@dura/contracts';
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
 * object store (`argsRef`) are recorded as a stand-in, so only the tool is compared for them.
 */
export function sameIntent(recorded: CallState, intent: Intent): boolean {
  if (recorded.tool !== intent.tool) return false;
  if (recorded.argsRef) return true;
  return argsHash(recorded.args) === argsHash(intent.args) || approvalBeforeMark(recorded, intent);
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

/** Hash of a model request: a replay asking another question is non-determinism. */
export function requestHash(request: JsonObject): string {
  return argsHash(request);
}
