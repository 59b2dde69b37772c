import type { JsonValue, RunEvent, TokenFeedEvent } from '@dura/contracts';
import { APPROVE_SIGNAL, REJECT_SIGNAL, STATUS_AFTER, callApprovalOf, isTerminal } from '@dura/core';

/** One chunk of the AI SDK's UI message stream (protocol v1), as `useChat` reads it. */
export type UiChunk = { type: string } & Record<string, JsonValue | undefined>;

/** A model call's text part in the current step. */
interface CallText {
  id: string;
  text: string;
  open: boolean;
}

export interface TurnChunks {
  /** An event of the turn's run log, in log order. */
  event(event: RunEvent): UiChunk[];
  /** What the run's token feed says (from `createTokenFeed`, fed the same log and the run's `DURA_TOKENS`). */
  feed(event: TokenFeedEvent): UiChunk[];
  /** The approval the run waits for, once asked and not yet answered. */
  readonly awaitingApproval: string | undefined;
  /** The run's final status, once its terminal event came (the stream is then finished). */
  readonly ended: string | undefined;
}

/**
 * One turn of a chat (one run) as UI message chunks: a step per decision, its model calls' text as text parts
 * streamed from the live tokens, its tool calls as dynamic tool parts with their results, a call awaiting
 * approval as the tool part's approval request. When a model call is asked again, or its recorded answer is
 * not what was streamed, the step is reset (`reset-step`) and shown again from what is known, so the page
 * never shows a mix of two attempts and ends with the recorded answers.
 */
export function createTurnChunks(messageId: string): TurnChunks {
  let started = false;
  let ended: string | undefined;
  let decisions = 0;
  let step: { decision: number; calls: Map<number, CallText> } | undefined;
  let parts = 0;
  const tools = new Set<string>();
  let awaiting: { waitId: string; callId: string } | undefined;

  const start = (): UiChunk[] => {
    if (started) return [];
    started = true;
    return [{ type: 'start', messageId }];
  };

  /** Opens the step of `decision` (closing the one before) unless it is the current one. */
  const stepOf = (decision: number): UiChunk[] => {
    const out = start();
    if (step?.decision === decision) return out;
    if (step) out.push({ type: 'finish-step' });
    step = { decision, calls: new Map() };
    out.push({ type: 'start-step' });
    return out;
  };

  const newText = (text: string): CallText => ({ id: `text-${parts++}`, text, open: false });

  /** Sends the text so far of `call` as a new part (after a reset), left open unless `close`. */
  const shown = (call: CallText): UiChunk[] => {
    const out: UiChunk[] = [{ type: 'text-start', id: call.id }];
    if (call.text !== '') out.push({ type: 'text-delta', id: call.id, delta: call.text });
    call.open = true;
    return out;
  };

  /** Drops the current step's parts on the page and shows its calls' texts again. */
  const resetStep = (): UiChunk[] => (step ? [{ type: 'reset-step' }, ...restartStep()] : []);

  /** Starts the current step again on the page and shows its calls' texts anew (after a `reset-step`). */
  const restartStep = (): UiChunk[] => {
    if (!step) return [];
    const out: UiChunk[] = [{ type: 'start-step' }];
    for (const [call, text] of [...step.calls].sort(([a], [b]) => a - b)) {
      const again = newText(text.text);
      step.calls.set(call, again);
      if (again.text !== '' || text.open) out.push(...shown(again));
      if (!text.open && again.open) {
        out.push({ type: 'text-end', id: again.id });
        again.open = false;
      }
    }
    return out;
  };

  function feed(e: TokenFeedEvent): UiChunk[] {
    if (ended !== undefined || e.event === 'end' || e.event === 'gap') return [];
    const { decision, call } = e.data;
    if (decision < decisions && e.event !== 'final') return [];
    const out = stepOf(decision);
    const calls = step!.calls;
    const known = calls.get(call);
    switch (e.event) {
      case 'token': {
        const text = known ?? newText('');
        calls.set(call, text);
        if (!text.open) out.push({ type: 'text-start', id: text.id });
        text.open = true;
        text.text += e.data.delta;
        out.push({ type: 'text-delta', id: text.id, delta: e.data.delta });
        return out;
      }
      case 'discard': {
        if (!known || known.text === '') return out;
        calls.delete(call);
        out.push(...resetStep());
        return out;
      }
      case 'final': {
        const recorded = e.data.text;
        if (!known) {
          if (recorded === '') return out;
          const text = newText(recorded);
          calls.set(call, text);
          out.push(...shown(text), { type: 'text-end', id: text.id });
          text.open = false;
          return out;
        }
        if (recorded.startsWith(known.text) && (known.open || recorded === known.text)) {
          const rest = recorded.slice(known.text.length);
          known.text = recorded;
          if (rest !== '') out.push({ type: 'text-delta', id: known.id, delta: rest });
        } else {
          // Shown again closed, and not at all when the call recorded no text.
          known.text = recorded;
          known.open = false;
          out.push(...resetStep());
        }
        const now = calls.get(call)!;
        if (now.open) out.push({ type: 'text-end', id: now.id });
        now.open = false;
        return out;
      }
    }
  }

  function event(e: RunEvent): UiChunk[] {
    if (ended !== undefined) return [];
    switch (e.type) {
      case 'thought':
        decisions += 1;
        return stepOf(decisions - 1);
      case 'tool_call_requested': {
        tools.add(e.data.callId);
        const part: UiChunk = {
          type: 'tool-input-available',
          toolCallId: e.data.callId,
          toolName: e.data.tool,
          input: e.data.args,
          dynamic: true,
        };
        const decision = Math.max(0, decisions - 1);
        // The next decision's text came first (the log is read behind the text): the call goes before that
        // step on the page, which is shown again after it, so the step is never opened twice.
        if (step !== undefined && step.decision > decision)
          return [{ type: 'reset-step' }, part, ...restartStep()];
        return [...stepOf(decision), part];
      }
      case 'tool_call_completed':
        if (!tools.has(e.data.callId)) return [];
        return [
          { type: 'tool-output-available', toolCallId: e.data.callId, output: e.data.result, dynamic: true },
        ];
      case 'tool_call_failed':
        if (!tools.has(e.data.callId) || e.data.retryable) return [];
        return [
          {
            type: 'tool-output-error',
            toolCallId: e.data.callId,
            errorText: `${e.data.error.code}: ${e.data.error.message}`,
            dynamic: true,
          },
        ];
      case 'wait_requested':
        if (e.data.kind !== 'approval' || e.data.callId === undefined || !tools.has(e.data.callId)) return [];
        awaiting = { waitId: e.data.waitId, callId: e.data.callId };
        return [{ type: 'tool-approval-request', approvalId: e.data.waitId, toolCallId: e.data.callId }];
      case 'signal_received': {
        if (!awaiting || (e.data.name !== APPROVE_SIGNAL && e.data.name !== REJECT_SIGNAL)) return [];
        const [approved] = callApprovalOf(e.data.name, e.data.payload);
        const answered = awaiting;
        awaiting = undefined;
        return [{ type: 'tool-approval-response', approvalId: answered.waitId, approved }];
      }
      default:
        return terminal(e);
    }
  }

  function terminal(e: RunEvent): UiChunk[] {
    const status = STATUS_AFTER[e.type];
    if (status === undefined || !isTerminal(status)) return [];
    ended = status;
    awaiting = undefined;
    const out = start();
    if (step) out.push({ type: 'finish-step' });
    if (e.type === 'run_failed')
      out.push({
        type: 'error',
        errorText: `the turn failed: ${e.data.error.code}: ${e.data.error.message}`,
      });
    out.push({ type: 'finish', finishReason: e.type === 'run_completed' ? 'stop' : 'other' });
    return out;
  }

  return {
    event,
    feed,
    get awaitingApproval() {
      return awaiting?.waitId;
    },
    get ended() {
      return ended;
    },
  };
}
