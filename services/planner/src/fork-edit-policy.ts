import type { ForkEdit, JsonValue, NewEvent, RunEventOf } from '@dura/contracts';
import { sealSecretFields, SecretsKeyMissing, type SecretsBox, type ToolRegistry } from '@dura/tools';
import { checkPlan } from './plan-check';
import type { Rejection } from './reject-request';
import { REDACTED } from './redact-request';
import { SecretInChildPlan, sealRequest } from './seal-request';
import type { RegisteredSecrets } from './secret-inputs';

export interface ForkEditPolicyDeps {
  tools: ToolRegistry;
  secrets?: SecretsBox;
  registered?: RegisteredSecrets;
}

type NewEventOf<T extends NewEvent['type']> = Omit<RunEventOf<T>, 'seq'>;

export type GuardedFork =
  { ok: true; events: NewEvent[]; sealed: boolean } | { ok: false; rejection: Rejection };

/**
 * A fork's planned log with its edit held to the rules a submit and the gateway follow: an edited input
 * passes the plan check and has its secret fields sealed for the fork (as a submitted input would); an
 * edited tool result must match the tool's declared output (a tool that declares none leaves nothing to
 * check) and has the tool's secret result fields sealed (as the gateway seals a real result). `sealed`: the
 * edit held a secret in clear, so the request that carried it is erased once handled.
 */
export function guardForkEdit(
  deps: ForkEditPolicyDeps,
  planned: readonly NewEvent[],
  edit: ForkEdit,
): GuardedFork {
  let sealed = false;
  const events = [...planned];
  try {
    const root = events[0];
    if (edit.input !== undefined && root?.type === 'run_requested') {
      const { request } = (root as NewEventOf<'run_requested'>).data;
      const problem = checkPlan(request, deps.tools);
      if (problem) return refuse(problem.code, problem.message, problem.issues);
      const done = sealRequest(request, deps.tools, deps.secrets, {
        ...(deps.registered ? { registered: deps.registered } : {}),
      });
      sealed ||= done.changed;
      events[0] = { ...root, data: { ...root.data, request: done.request } };
    }
    if (edit.toolResult !== undefined) {
      const at = events.findIndex((event) => event.type === 'tool_call_completed' && 'edited' in event.data);
      const completed = events[at] as NewEventOf<'tool_call_completed'>;
      const { callId } = edit.toolResult;
      const intent = events.find(
        (event) =>
          event.type === 'tool_call_requested' && (event.data as { callId: string }).callId === callId,
      ) as NewEventOf<'tool_call_requested'>;
      const { tool } = intent.data;
      if (!deps.tools.get(tool))
        return refuse(
          'unknown_tool',
          `call ${callId} used ${tool}, which this planner does not offer, so an edited result can be neither checked against its output nor have its secret fields sealed; fork without editing it, or where ${tool} is registered`,
        );
      const issues = deps.tools.resultIssues(tool, completed.data.result);
      if (issues.length > 0)
        return refuse(
          'invalid_tool_result',
          `the edited result of call ${callId} is not what ${tool} answers; correct the edit to match the tool's output`,
          issues,
        );
      const paths = deps.tools.secretFields(tool).result;
      const what = `the edited result of call ${callId} (${tool})`;
      const result = sealSecretFields(completed.data.result, paths, deps.secrets, completed.meta.runId, what);
      sealed ||= result !== completed.data.result;
      for (const [index, event] of events.entries())
        if (event.type === 'tool_call_completed' && 'edited' in event.data)
          events[index] = { ...event, data: { ...event.data, result } };
    }
  } catch (err) {
    if (err instanceof SecretsKeyMissing || err instanceof SecretInChildPlan)
      return refuse(err.code, err.message);
    throw err;
  }
  return { ok: true, events, sealed };
}

function refuse(code: string, message: string, issues?: string[]): GuardedFork {
  return { ok: false, rejection: { error: { code, message }, ...(issues ? { issues } : {}) } };
}

/**
 * A fork request's body as a dead letter keeps it: the edited values are replaced by `"[secret]"` (they may
 * hold secrets, which only the source run's agent and tools can tell); everything else as sent.
 */
export function redactForkEditBytes(data: Uint8Array): Uint8Array | undefined {
  try {
    return redactForkEdit(JSON.parse(new TextDecoder().decode(data)));
  } catch {
    return undefined;
  }
}

/** `redactForkEditBytes` of a parsed body; undefined when it carries no edit. */
export function redactForkEdit(body: unknown): Uint8Array | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const edit = (body as { edit?: unknown }).edit;
  if (edit === null || typeof edit !== 'object' || Array.isArray(edit)) return undefined;
  const { input, toolResult, ...rest } = edit as { input?: JsonValue; toolResult?: unknown };
  const result =
    toolResult !== null && typeof toolResult === 'object' && !Array.isArray(toolResult)
      ? { ...(toolResult as Record<string, unknown>), output: REDACTED }
      : toolResult;
  const hidden = {
    ...rest,
    ...(input === undefined ? {} : { input: REDACTED }),
    ...(toolResult === undefined ? {} : { toolResult: result }),
  };
  return new TextEncoder().encode(JSON.stringify({ ...body, edit: hidden }));
}
