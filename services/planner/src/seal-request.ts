import { isControlTool, type Decision, type JsonValue, type RunRequest } from '@dura/contracts';
import {
  isSecretEnvelope,
  mapSecretFields,
  sealSecretFields,
  type SecretsBox,
  type ToolRegistry,
} from '@dura/tools';

const PLAN_REFERENCE = /^\$(?:steps\.\d+|input)(?:\.[^.]+)*$/;
const INPUT_REFERENCE = /^\$input((?:\.[^.]+)*)$/;

const isReference = (value: JsonValue): boolean => typeof value === 'string' && PLAN_REFERENCE.test(value);

type Request = RunRequest & { runId: string };

/**
 * The request as the log may hold it: every plain value at a secret argument field of a plan step is
 * sealed, and so is each part of the run's input that a step passes to a secret field (`"$input.card"`).
 * Sealing is deterministic, so a redelivered request seals to the same record. `changed` tells whether
 * the request held any secret in clear (then its copy on `dura.submit` is erased once it is recorded).
 * Throws SecretsKeyMissing when it holds one and no key is configured.
 */
export function sealRequest(
  request: Request,
  tools: ToolRegistry,
  box: SecretsBox | undefined,
): { request: Request; changed: boolean } {
  if (request.agent.kind !== 'scripted') return { request, changed: false };
  let changed = false;
  const inputPaths = new Set<string>();
  const steps = request.agent.steps.map((step, index) => {
    if (isControlTool(step.tool)) return step;
    const paths = tools.secretFields(step.tool).args;
    if (paths.length === 0) return step;
    for (const path of paths)
      for (const found of inputReferencesAlong(step.args, path.split('.'))) inputPaths.add(found);
    const what = `plan step ${index} (${step.tool})`;
    const args = sealSecretFields(step.args, paths, box, request.runId, what, isReference);
    if (args === step.args) return step;
    changed = true;
    return { ...step, args: args as typeof step.args };
  });
  let input = request.input;
  if (input !== undefined && inputPaths.size > 0) {
    // `"$input"` itself names the whole input: it is sealed as one value.
    const sealed = inputPaths.has('')
      ? (sealSecretFields({ input }, ['input'], box, request.runId, 'the run input') as { input: JsonValue })
          .input
      : sealSecretFields(input, [...inputPaths], box, request.runId, 'the run input');
    changed ||= sealed !== input;
    input = sealed;
  }
  if (!changed) return { request, changed };
  return {
    request: {
      ...request,
      agent: { ...request.agent, steps },
      ...(input === undefined ? {} : { input }),
    },
    changed,
  };
}

/** A request body with every plain value at a secret field replaced, for a dead letter of a refused request. */
export function redactRequest(request: Request, tools: ToolRegistry): Request {
  if (request.agent.kind !== 'scripted') return request;
  const steps = request.agent.steps.map((step) => {
    const paths = isControlTool(step.tool) ? [] : tools.secretFields(step.tool).args;
    const args = mapSecretFields(step.args, paths, (found) => (isReference(found) ? found : '[secret]'));
    return { ...step, args: args as typeof step.args };
  });
  return { ...request, agent: { ...request.agent, steps } };
}

/**
 * A model's decision as the `thought` records it: secret argument fields of each tool call sealed (for
 * agents, the model wrote them in clear). Values the plan sealed already pass unchanged.
 */
export function sealDecision(
  decision: Decision,
  tools: ToolRegistry,
  box: SecretsBox | undefined,
  scope: string,
): Decision {
  if (decision.kind !== 'tool_calls') return decision;
  let changed = false;
  const calls = decision.calls.map((call) => {
    const paths = isControlTool(call.tool) ? [] : tools.secretFields(call.tool).args;
    if (paths.length === 0) return call;
    const args = sealSecretFields(call.args, paths, box, scope, `the call ${call.callId} (${call.tool})`);
    if (args === call.args) return call;
    changed = true;
    return { ...call, args: args as typeof call.args };
  });
  return changed ? { ...decision, calls } : decision;
}

/**
 * The input paths a secret field takes its value from: `card: "$input.card"` with secret path `card.token`
 * reads `card.token` of the input (`""`: the whole input).
 */
function inputReferencesAlong(value: JsonValue, segments: readonly string[]): string[] {
  if (typeof value === 'string') {
    const match = INPUT_REFERENCE.exec(value);
    if (!match) return [];
    return [[...(match[1] ?? '').split('.').slice(1), ...segments].join('.')];
  }
  const [head, ...rest] = segments;
  if (head === undefined || value === null || typeof value !== 'object' || isSecretEnvelope(value)) return [];
  const items: JsonValue[] = Array.isArray(value)
    ? value.filter((_, index) => head === '*' || head === String(index))
    : head === '*'
      ? Object.values(value)
      : Object.hasOwn(value, head)
        ? [value[head] as JsonValue]
        : [];
  return items.flatMap((item) => inputReferencesAlong(item, rest));
}
