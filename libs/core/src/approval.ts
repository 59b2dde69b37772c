import type { JsonValue } from '@dura/contracts';
import { canonicalJson } from './canonical-json';
import { APPROVE_SIGNAL, REJECT_SIGNAL } from './signals';

/** What an answer to an approval says: approved, or refused (with the person's reason, or what was wrong). */
export type ApprovalVerdict = { approved: true } | { approved: false; reason?: string };

const SHOWN = 200;

function isObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function shown(payload: JsonValue | undefined): string {
  if (payload === undefined) return 'no payload';
  const text = canonicalJson(payload);
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

/**
 * The verdict of the signal `signal` answering an approval. Fails closed: only `approved: true` (the boolean)
 * approves; `approved: false` refuses with the `reason` given, if any; anything else (`{}`, `null`, `"yes"`,
 * `{"approved": "true"}`, no payload) is a refusal whose reason names what it got.
 */
export function approvalVerdict(signal: string, payload: JsonValue | undefined): ApprovalVerdict {
  const fields = isObject(payload) ? payload : undefined;
  if (fields?.approved === true) return { approved: true };
  if (fields?.approved === false) {
    const reason = fields.reason;
    return typeof reason === 'string' && reason !== '' ? { approved: false, reason } : { approved: false };
  }
  return {
    approved: false,
    reason: `approval signal '${signal}' carried ${shown(payload)} — only {"approved": true} approves`,
  };
}

/**
 * What `approve` or `reject` says about a call awaiting approval, as [approved, why not]: `reject` always
 * refuses; `approve` approves only with `{ approved: true }`, and any other payload is a refusal naming what it got.
 */
export function callApprovalOf(
  name: string,
  payload: JsonValue | undefined,
): [approved: boolean, rejection: string] {
  const fields = isObject(payload) ? payload : {};
  if (name === APPROVE_SIGNAL && fields.approved !== false) {
    const verdict = approvalVerdict(name, payload);
    return verdict.approved ? [true, ''] : [false, verdict.reason ?? ''];
  }
  const reason = typeof fields.reason === 'string' && fields.reason !== '' ? `: ${fields.reason}` : '';
  return [false, `a human rejected it${reason}`];
}

/** The fields of a wait that say whether and how a person answers it with a verdict. */
export interface VerdictWait {
  kind: string;
  signal?: string | undefined;
  callId?: string | undefined;
  approval?: boolean | undefined;
}

/**
 * The waits a person answers with a verdict, oldest first: calls awaiting approval (an agent's approvals, a
 * tool's `requiresApproval`, `ctx.tool(…, { approval })`) and `ctx.approve` waits.
 */
export function verdictWaits<W extends VerdictWait>(waits: readonly W[]): W[] {
  return waits.filter(
    (wait) => wait.kind === 'approval' || (wait.kind === 'signal' && wait.approval === true),
  );
}

/**
 * The signal that gives `wait` a verdict: `approve` / `reject` naming the call for a call awaiting approval,
 * the wait's own signal for `ctx.approve`; approving always carries `{ approved: true }`.
 */
export function verdictSignal(
  wait: VerdictWait,
  verdict: { approved: boolean; reason?: string | undefined },
): { name: string; payload: { [key: string]: JsonValue } } {
  const payload = {
    approved: verdict.approved,
    ...(!verdict.approved && verdict.reason ? { reason: verdict.reason } : {}),
  };
  if (wait.kind === 'signal' && wait.signal !== undefined) return { name: wait.signal, payload };
  const name = verdict.approved ? APPROVE_SIGNAL : REJECT_SIGNAL;
  return { name, payload: { ...(wait.callId === undefined ? {} : { callId: wait.callId }), ...payload } };
}
