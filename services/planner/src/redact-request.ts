import { CONTROL_TOOLS, isControlTool, type JsonValue } from '@dura/contracts';
import { isSecretEnvelope, mapSecretFields, type ToolRegistry } from '@dura/tools';
import { isReference } from './plan-references';
import {
  isPlanStep,
  NO_REGISTERED_SECRETS,
  planSecretInputs,
  registeredOrNewest,
  type RegisteredSecrets,
} from './secret-inputs';

/** What a dead letter shows in place of a secret. */
export const REDACTED = '[secret]';

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A request body, valid or not, with every plain value at a secret field replaced by `"[secret]"`: the
 * secret argument fields of each plan step, the parts of the input a step passes to one (`"$input.card"`),
 * the same inside a child run's inline plan, and the input fields a registered agent's run holds secrets at
 * (`registered`: declared by the agent, or passed on by its plan). For a dead letter, which must never keep a
 * secret in clear. Returns `body` itself when it holds no secret, so a caller can tell whether it did.
 */
export function redactRequest<T>(
  body: T,
  tools: ToolRegistry,
  registered: RegisteredSecrets = NO_REGISTERED_SECRETS,
): T {
  if (!isObject(body)) return body;
  const agent = body['agent'];
  if (isObject(agent) && agent['kind'] === 'agent' && typeof agent['name'] === 'string') {
    const paths = registeredOrNewest(registered, agent['name'], agent['version']) ?? [];
    return withInput(body, hideInput(body['input'] as JsonValue | undefined, paths));
  }
  if (!isObject(agent) || agent['kind'] !== 'scripted' || !Array.isArray(agent['steps'])) return body;
  const oldSteps = agent['steps'] as unknown[];
  const steps = oldSteps.map((step) => {
    if (!isPlanStep(step)) return step;
    const args = step.args;
    if (step.tool === CONTROL_TOOLS.runAgent && isObject(args)) {
      // A child's inline plan and input are a request of their own.
      const child = redactRequest({ agent: args['agent'], input: args['input'] }, tools, registered);
      if (child.agent === args['agent'] && child.input === args['input']) return step;
      return {
        ...step,
        args: { ...args, agent: child.agent, ...(child.input === undefined ? {} : { input: child.input }) },
      };
    }
    if (isControlTool(step.tool)) return step;
    const redacted = mapSecretFields(args, tools.secretFields(step.tool).args, hide);
    return redacted === args ? step : { ...step, args: redacted };
  });
  const paths = planSecretInputs(oldSteps.filter(isPlanStep), tools, registered);
  const input = hideInput(body['input'] as JsonValue | undefined, paths);
  if (input === body['input'] && steps.every((step, index) => step === oldSteps[index])) return body;
  return { ...body, agent: { ...agent, steps }, ...(input === undefined ? {} : { input }) };
}

function hideInput(input: JsonValue | undefined, paths: readonly string[]): JsonValue | undefined {
  if (input === undefined || paths.length === 0) return input;
  return paths.includes('') ? hide(input) : mapSecretFields(input, paths, hide);
}

function withInput<T extends Loose>(body: T, input: JsonValue | undefined): T {
  return input === body['input'] ? body : { ...body, input };
}

function hide(found: JsonValue): JsonValue {
  return isReference(found) || isSecretEnvelope(found) ? found : REDACTED;
}

/** A message's bytes with its secrets redacted, or undefined when it holds none (or is not JSON). */
export function redactRequestBytes(
  bytes: Uint8Array,
  tools: ToolRegistry,
  registered: RegisteredSecrets = NO_REGISTERED_SECRETS,
): Uint8Array | undefined {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
  const redacted = redactRequest(body, tools, registered);
  return redacted === body ? undefined : new TextEncoder().encode(JSON.stringify(redacted));
}
