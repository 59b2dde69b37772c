import {
  CONTROL_TOOLS,
  DuraError,
  isControlTool,
  type Decision,
  type JsonValue,
  type RunRequest,
} from '@dura/contracts';
import { sealSecretFields, type SecretsBox, type ToolRegistry } from '@dura/tools';
import { inputReferencesAlong, isReference } from './plan-references';
import { redactRequest } from './redact-request';

type Request = RunRequest & { runId: string };

/**
 * A child run's inline plan holds a secret in clear. It would be sealed for the child's run, which the
 * parent's log (where the plan is recorded first) cannot be: refused rather than stored in clear.
 */
export class SecretInChildPlan extends DuraError {
  constructor(index: number) {
    super(
      'secret_in_child_plan',
      `plan step ${index} (${CONTROL_TOOLS.runAgent}) gives its child run a secret in clear (in its inline plan or input); a secret cannot be passed to a child run: submit that run on its own, or have the child take the secret from a tool`,
    );
  }
}

/**
 * The request as the log may hold it: every plain value at a secret argument field of a plan step is
 * sealed, and so is each part of the run's input that a step passes to a secret field (`"$input.card"`).
 * Sealing is deterministic, so a redelivered request seals to the same record. `changed` tells whether
 * the request held any secret in clear (then its copy on `dura.submit` is erased once it is recorded).
 * Throws SecretsKeyMissing when it holds one and no key is configured, SecretInChildPlan when a child run's
 * inline plan or input holds one.
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
    if (step.tool === CONTROL_TOOLS.runAgent) {
      const { agent, input } = step.args as { agent?: JsonValue; input?: JsonValue };
      const child = { agent, input };
      if (redactRequest(child, tools) !== child) throw new SecretInChildPlan(index);
    }
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
