import { CONTROL_TOOLS, isControlTool, type JsonValue } from '@dura/contracts';
import { isSecretEnvelope, mapSecretFields, type ToolRegistry } from '@dura/tools';
import { inputReferencesAlong, isReference } from './plan-references';

/** What a dead letter shows in place of a secret. */
export const REDACTED = '[secret]';

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A request body, valid or not, with every plain value at a secret field replaced by `"[secret]"`: the
 * secret argument fields of each plan step, the parts of the input a step passes to one (`"$input.card"`),
 * and the same inside a child run's inline plan. For a dead letter, which must never keep a secret in clear.
 * Returns `body` itself when it holds no secret, so a caller can tell whether it did.
 */
export function redactRequest<T>(body: T, tools: ToolRegistry): T {
  if (!isObject(body)) return body;
  const agent = body['agent'];
  if (!isObject(agent) || agent['kind'] !== 'scripted' || !Array.isArray(agent['steps'])) return body;
  const inputPaths = new Set<string>();
  const oldSteps = agent['steps'] as unknown[];
  const steps = oldSteps.map((step) => {
    if (!isObject(step) || typeof step['tool'] !== 'string' || step['args'] === undefined) return step;
    const args = step['args'] as JsonValue;
    if (step['tool'] === CONTROL_TOOLS.runAgent && isObject(args)) {
      // A child's inline plan and input are a request of their own.
      const child = redactRequest({ agent: args['agent'], input: args['input'] }, tools);
      if (child.agent === args['agent'] && child.input === args['input']) return step;
      return {
        ...step,
        args: { ...args, agent: child.agent, ...(child.input === undefined ? {} : { input: child.input }) },
      };
    }
    if (isControlTool(step['tool'])) return step;
    const paths = tools.secretFields(step['tool']).args;
    for (const path of paths)
      for (const found of inputReferencesAlong(args, path.split('.'))) inputPaths.add(found);
    const redacted = mapSecretFields(args, paths, hide);
    return redacted === args ? step : { ...step, args: redacted };
  });
  let input = body['input'] as JsonValue | undefined;
  if (input !== undefined && inputPaths.size > 0)
    input = inputPaths.has('') ? hide(input) : mapSecretFields(input, [...inputPaths], hide);
  if (input === body['input'] && steps.every((step, index) => step === oldSteps[index])) return body;
  return { ...body, agent: { ...agent, steps }, ...(input === undefined ? {} : { input }) };
}

function hide(found: JsonValue): JsonValue {
  return isReference(found) || isSecretEnvelope(found) ? found : REDACTED;
}

/** A message's bytes with its secrets redacted, or undefined when it holds none (or is not JSON). */
export function redactRequestBytes(bytes: Uint8Array, tools: ToolRegistry): Uint8Array | undefined {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
  const redacted = redactRequest(body, tools);
  return redacted === body ? undefined : new TextEncoder().encode(JSON.stringify(redacted));
}
