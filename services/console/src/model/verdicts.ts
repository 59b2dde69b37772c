import type { JsonValue, RunEvent, RunEventOf } from '@dura/contracts';
import { APPROVE_SIGNAL, REJECT_SIGNAL, approvalVerdict, callApprovalOf } from '@dura/core';
import { fullTime } from './format';

/** How a wait for a person's verdict ended: the signal that answered it, or its deadline passing. */
export type VerdictAnswer =
  | {
      kind: 'signal';
      approved: boolean;
      reason?: string;
      /** The signal's id: a signal records no sender, so its id is what names who answered. */
      signalId: string;
      signal: string;
      /** The time the signal was recorded on the run's log (ISO). */
      at: string;
    }
  | { kind: 'timeout'; onTimeout?: string; at: string };

type Wait = RunEventOf<'wait_requested'>['data'];

function objectOf(payload: JsonValue | undefined): Record<string, JsonValue> {
  return payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? payload : {};
}

/**
 * The answers to the run's verdict waits (calls awaiting approval and `ctx.approve` waits), by the callId of
 * the call each wait belongs to. Matches signals to waits as the fold does: `approve` / `reject` answer the
 * approval wait of `payload.callId`, else the oldest; any other signal answers the signal wait of its name.
 */
export function verdictAnswers(events: readonly RunEvent[]): Map<string, VerdictAnswer> {
  const answers = new Map<string, VerdictAnswer>();
  let open: Wait[] = [];
  const close = (wait: Wait, answer: VerdictAnswer) => {
    open = open.filter((w) => w !== wait);
    if (wait.callId !== undefined && (wait.kind === 'approval' || wait.approval === true))
      answers.set(wait.callId, answer);
  };
  for (const event of events) {
    if (event.type === 'wait_requested') open.push(event.data);
    else if (event.type === 'timer_fired') {
      const wait = open.find((w) => w.waitId === event.data.waitId);
      if (wait)
        close(wait, {
          kind: 'timeout',
          at: event.meta.ts,
          ...(wait.onTimeout ? { onTimeout: wait.onTimeout } : {}),
        });
    } else if (event.type === 'signal_received') {
      const { name, payload, signalId } = event.data;
      const answered = { kind: 'signal' as const, signalId, signal: name, at: event.meta.ts };
      if (name === APPROVE_SIGNAL || name === REJECT_SIGNAL) {
        const wanted = objectOf(payload).callId;
        const wait = open.find(
          (w) => w.kind === 'approval' && (typeof wanted !== 'string' || w.callId === wanted),
        );
        if (wait) {
          const [approved, rejection] = callApprovalOf(name, payload);
          close(wait, { ...answered, approved, ...(rejection ? { reason: rejection } : {}) });
          continue;
        }
      }
      const wait = open.find((w) => w.kind === 'signal' && w.signal === name);
      if (wait) {
        const verdict = approvalVerdict(name, payload);
        close(wait, { ...answered, ...verdict });
      }
    }
  }
  return answers;
}

/** The answer as facts on a waterfall row: with what, by which signal, when (in full), and why not. */
export function answerFacts(answer: VerdictAnswer): string[] {
  if (answer.kind === 'timeout')
    return [`nobody answered by ${fullTime(answer.at)}`, `timed out: ${answer.onTimeout ?? 'gave up'}`];
  return [
    `${answer.approved ? 'approved' : 'rejected'} by signal ${answer.signal} ${answer.signalId}`,
    `at ${fullTime(answer.at)}`,
    ...(answer.reason ? [`reason: ${answer.reason}`] : []),
  ];
}

/** What happens when nobody answers a wait in time, in words. */
export const ON_TIMEOUT: Record<NonNullable<Wait['onTimeout']>, string> = {
  reject: 'the call is rejected',
  approve: 'the call is approved',
  fail: 'the run fails',
  continue: 'the run goes on without a verdict (not approved)',
};

/** A wait's deadline as a waterfall fact (none for a wait without one). */
export function deadlineFacts(wait: Pick<Wait, 'timeoutAt' | 'onTimeout'>): string[] {
  if (wait.timeoutAt === undefined) return [];
  const then = wait.onTimeout ? `: ${wait.onTimeout}` : '';
  return [`deadline ${fullTime(wait.timeoutAt)}${then}`];
}
