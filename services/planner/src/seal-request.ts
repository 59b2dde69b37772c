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
import { isReference } from './plan-references';
import { redactRequest } from './redact-request';
import {
  NO_REGISTERED_SECRETS,
  planSecretInputs,
  registeredOrNewest,
  type RegisteredSecrets,
} from './secret-inputs';

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

/** How a request is sealed: what to do with a child's secret, and where registered agents hold theirs. */
export interface SealOptions {
  /** A child run's inline plan or input holding a secret in clear: refused (default), or sealed for this run. */
  children?: 'refuse' | 'seal';
  /** The secret input paths of registered agents' runs (none by default: only inline plans are followed). */
  registered?: RegisteredSecrets;
}

/**
 * The request as the log may hold it: every plain value at a secret argument field of a plan step is
 * sealed, and so is each part of the run's input that holds a secret: what a step passes to a secret field
 * (`"$input.card"`) of an inline plan or a registered scripted agent's plan, and what a registered agent
 * (JSON or code) declares secret (`secrets: { input }`). Sealing is deterministic, so a redelivered request
 * seals to the same record. `changed` tells whether the request held any secret in clear (then its copy on
 * `dura.submit` is erased once it is recorded). Throws SecretsKeyMissing when it holds one and no key is
 * configured. A child run's inline plan or input holding one is refused (SecretInChildPlan), or with
 * `children: 'seal'` sealed for this run's scope.
 */
export function sealRequest(
  request: Request,
  tools: ToolRegistry,
  box: SecretsBox | undefined,
  options: SealOptions = {},
): { request: Request; changed: boolean } {
  const registered = options.registered ?? NO_REGISTERED_SECRETS;
  if (request.agent.kind === 'agent') {
    const paths = registeredOrNewest(registered, request.agent.name, request.agent.version) ?? [];
    const input = sealInput(request.input, paths, box, request.runId);
    return input === request.input
      ? { request, changed: false }
      : { request: { ...request, input }, changed: true };
  }
  let changed = false;
  const steps = request.agent.steps.map((step, index) => {
    if (step.tool === CONTROL_TOOLS.runAgent) {
      const args = sealChildArgs(step.args, tools, box, request.runId, options, index);
      if (args === step.args) return step;
      changed = true;
      return { ...step, args };
    }
    if (isControlTool(step.tool)) return step;
    const paths = tools.secretFields(step.tool).args;
    if (paths.length === 0) return step;
    const what = `plan step ${index} (${step.tool})`;
    const args = sealSecretFields(step.args, paths, box, request.runId, what, isReference);
    if (args === step.args) return step;
    changed = true;
    return { ...step, args: args as typeof step.args };
  });
  const input = sealInput(
    request.input,
    planSecretInputs(request.agent.steps, tools, registered),
    box,
    request.runId,
  );
  changed ||= input !== request.input;
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

/** The run's input with every plain value at `paths` sealed (`""`: the whole input, sealed as one value). */
function sealInput(
  input: JsonValue | undefined,
  paths: readonly string[],
  box: SecretsBox | undefined,
  scope: string,
): JsonValue | undefined {
  if (input === undefined || paths.length === 0) return input;
  if (paths.includes(''))
    return (sealSecretFields({ input }, ['input'], box, scope, 'the run input') as { input: JsonValue })
      .input;
  return sealSecretFields(input, paths, box, scope, 'the run input');
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
  options: SealOptions,
  index: number,
): JsonObject {
  const child = { agent: args['agent'], input: args['input'] };
  if (redactRequest(child, tools, options.registered) === child) return args;
  if ((options.children ?? 'refuse') === 'refuse') throw new SecretInChildPlan(index);
  // A secret was found, so `agent` is an inline scripted plan or a registered agent's reference.
  const request = {
    v: RUN_REQUEST_VERSION,
    runId: scope,
    agent: args['agent'],
    ...(args['input'] === undefined ? {} : { input: args['input'] }),
  } as Request;
  const sealed = sealRequest(request, tools, box, { ...options, children: 'seal' }).request;
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
  registered?: RegisteredSecrets,
): Decision {
  if (decision.kind !== 'tool_calls') return decision;
  let changed = false;
  const calls = decision.calls.map((call) => {
    if (call.tool === CONTROL_TOOLS.runAgent) {
      // A child plan the model wrote with a secret: sealed for this run, so no log holds it in clear; the
      // child cannot open it (its call fails with secret_unreadable): a secret never crosses into another run.
      const args = sealChildArgs(
        call.args,
        tools,
        box,
        scope,
        { children: 'seal', ...(registered ? { registered } : {}) },
        0,
      );
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
