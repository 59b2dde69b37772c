import {
  CONTROL_TOOLS,
  DuraError,
  type JsonObject,
  type JsonValue,
  type ScriptedStep,
} from '@dura/contracts';

const REFERENCE = /^\$(steps\.(\d+)|input)((?:\.[^.]+)*)$/;

export interface ReferenceScope {
  /** Results by step number (1-based). */
  results: Pick<ReadonlyMap<number, JsonValue>, 'get'>;
  input: JsonValue | undefined;
}

/** A `$steps.N.field` or `$input.field` reference that does not resolve. Terminal: the plan itself is wrong. */
export class BadReference extends DuraError {
  constructor(message: string) {
    super('bad_reference', message);
  }
}

/**
 * Replaces every string that is exactly a reference (`"$steps.1.imageTag"`, `"$input.name"`) with the value it
 * names, at any depth. Other strings pass through unchanged.
 */
export function resolveReferences(value: JsonValue, scope: ReferenceScope): JsonValue {
  if (typeof value === 'string') return resolveOne(value, scope);
  if (Array.isArray(value)) return value.map((item) => resolveReferences(item, scope));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveReferences(item, scope)]),
    );
  }
  return value;
}

function resolveOne(text: string, scope: ReferenceScope): JsonValue {
  const match = REFERENCE.exec(text);
  if (!match) return text;
  const step = match[2] === undefined ? undefined : Number(match[2]);
  let current: JsonValue | undefined = step === undefined ? scope.input : scope.results.get(step);
  if (current === undefined) {
    throw new BadReference(
      step === undefined ? `${text}: the run has no input` : `${text}: step ${step} has no result`,
    );
  }
  for (const key of (match[3] ?? '').split('.').slice(1)) {
    // Own fields only: `$input.constructor` must not reach Object.prototype and hand a function to a tool.
    const next: JsonValue | undefined =
      current !== null && typeof current === 'object' && Object.hasOwn(current, key)
        ? (current as Record<string, JsonValue>)[key]
        : undefined;
    if (next === undefined)
      throw new BadReference(`${text}: no field "${key}" in ${JSON.stringify(current)}`);
    current = next;
  }
  return current;
}

/**
 * The part of a step's arguments the plan's references resolve in. An inline child plan given to
 * `dura.run_agent` is the child's own: its references are the child's, resolved when the child runs.
 */
export function referencedArgs(step: ScriptedStep): JsonValue {
  if (step.tool !== CONTROL_TOOLS.runAgent || typeof step.args.agent !== 'object') return step.args;
  const { agent: _childPlan, ...rest } = step.args;
  return rest;
}

/** Resolves a step's references, leaving an inline child plan as it is. */
export function resolveStepArgs(step: ScriptedStep, scope: ReferenceScope): JsonObject {
  const resolved = resolveReferences(referencedArgs(step), scope) as JsonObject;
  return step.args.agent !== undefined && referencedArgs(step) !== step.args
    ? { ...resolved, agent: step.args.agent }
    : resolved;
}

/** Static check of a scripted plan: every `$steps.N` reference must point to an earlier step. */
export function planReferenceIssues(steps: readonly ScriptedStep[]): string[] {
  return steps.flatMap((step, index) => stepReferenceIssues(step, index, `agent.steps.${index}`));
}

/** The `$steps.N` references of `step` that do not point to one of the `before` steps that precede it. */
export function stepReferenceIssues(step: ScriptedStep, before: number, path: string): string[] {
  const issues: string[] = [];
  for (const text of stringsIn(referencedArgs(step))) {
    const match = REFERENCE.exec(text);
    const target = match?.[2] === undefined ? undefined : Number(match[2]);
    if (target !== undefined && (target < 1 || target > before))
      issues.push(`${path}.args: ${text} must reference an earlier step (1..${before})`);
  }
  return issues;
}

function stringsIn(value: JsonValue): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}
