import {
  CONTROL_TOOLS,
  DuraError,
  isControlTool,
  type Decision,
  RUN_REQUEST_VERSION,
  type JsonObject,
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
 * Throws SecretsKeyMissing when it holds one and no key is configured. A child run's inline plan or input
 * holding one is refused (SecretInChildPlan), or with `children: 'seal'` sealed for this run's scope.
 */
export function sealRequest(
  request: Request,
  tools: ToolRegistry,
  box: SecretsBox | undefined,
  children: 'refuse' | 'seal' = 'refuse',
): { request: Request; changed: boolean } {
  if (request.agent.kind !== 'scripted') return { request, changed: false };
  let changed = false;
  const inputPaths = new Set<string>();
  const steps = request.agent.steps.map((step, index) => {
    if (step.tool === CONTROL_TOOLS.runAgent) {
      const args = sealChildArgs(step.args, tools, box, request.runId, children, index);
      if (args === step.args) return step;
      changed = true;
      return { ...step, args };
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
 * A `dura.run_agent` call's arguments with the secrets of its inline plan and input sealed for `scope`
 * (the parent's run), or the arguments themselves when they hold none.
 */
function sealChildArgs(
  args: JsonObject,
  tools: ToolRegistry,
  box: SecretsBox | undefined,
  scope: string,
  children: 'refuse' | 'seal',
  index: number,
): JsonObject {
  const child = { agent: args['agent'], input: args['input'] };
  if (redactRequest(child, tools) === child) return args;
  if (children === 'refuse') throw new SecretInChildPlan(index);
  // A secret was found, so `agent` is an inline scripted plan.
  const request = {
    v: RUN_REQUEST_VERSION,
    runId: scope,
    agent: args['agent'],
    ...(args['input'] === undefined ? {} : { input: args['input'] }),
  } as Request;
  const sealed = sealRequest(request, tools, box, 'seal').request;
  return { ...args, agent: sealed.agent, ...(sealed.input === undefined ? {} : { input: sealed.input }) };
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
    if (call.tool === CONTROL_TOOLS.runAgent) {
      // A child plan the model wrote with a secret: sealed for this run, so no log holds it in clear; the
      // child cannot open it (its call fails with secret_unreadable): a secret never crosses into another run.
      const args = sealChildArgs(call.args, tools, box, scope, 'seal', 0);
      if (args === call.args) return call;
      changed = true;
      return { ...call, args };
    }
    const paths = isControlTool(call.tool) ? [] : tools.secretFields(call.tool).args;
    if (paths.length === 0) return call;
    const args = sealSecretFields(call.args, paths, box, scope, `the call ${call.callId} (${call.tool})`);
    if (args === call.args) return call;
    changed = true;
    return { ...call, args: args as typeof call.args };
  });
  return changed ? { ...decision, calls } : decision;
}
