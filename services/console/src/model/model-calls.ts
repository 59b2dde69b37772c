import { decodeJournal } from '@dura/code-agents/engine';
import type {
  ChatToolCall,
  ErrorInfo,
  EventData,
  PayloadRef,
  PromptRecord,
  RunEvent,
  RunEventOf,
  Usage,
} from '@dura/contracts';

/** A tool call a model asked for; a JSON agent's carries the Dura call id its events are filed under. */
export interface AskedCall extends ChatToolCall {
  /** Set when the arguments were offloaded: `arguments` is then the stand-in `{ $payload: uri }`. */
  argsRef?: PayloadRef;
}

/** One model call as the log recorded it: what it was sent (when recorded) and what it answered. */
export interface ModelCall {
  /** The event that recorded it: the agent's `thought`, or the code step's `thought` whose journal holds it. */
  seq: number;
  /** The model's input, content-addressed; absent for a code agent's call recorded without it. */
  prompt?: PromptRecord;
  content?: string;
  toolCalls: AskedCall[];
  model: string;
  usage: Usage;
  costUsd?: number;
  finishReason: string;
  /** The model decided to fail the run (a JSON agent's `fail` decision). */
  error?: ErrorInfo;
}

/** A tool call's outcome as its events recorded it. */
export interface CallOutcome {
  seq: number;
  /** The result's JSON, or the error's code and message. */
  content: string;
  isError: boolean;
  /** The result is in the object store, not in the event. */
  payload?: PayloadRef;
}

/**
 * Every model call of a run in log order: a JSON agent's thoughts that carry a prompt record, and the
 * `ctx.model` answers a code agent's step journals. A thought without either (a scripted plan's, a code step
 * that asked no model) is not a model call.
 */
export function modelCallsOf(events: readonly RunEvent[]): ModelCall[] {
  return events.flatMap((event) => (event.type === 'thought' ? callsOfThought(event) : []));
}

/** What `encodeJournal` writes first: other contents are not parsed at all. */
const JOURNAL_START = '{"journal":';

// Read once per event: the page rebuilds its conversations on every event the live stream appends.
const read = new WeakMap<RunEvent, ModelCall[]>();

function callsOfThought(event: RunEventOf<'thought'>): ModelCall[] {
  const known = read.get(event);
  if (known) return known;
  const calls = event.data.content?.startsWith(JOURNAL_START)
    ? journalCalls(event.seq, event.data.content)
    : agentCall(event.seq, event.data);
  read.set(event, calls);
  return calls;
}

/** A code step's `ctx.model` calls, from its journal. */
function journalCalls(seq: number, content: string): ModelCall[] {
  return decodeJournal(content).flatMap((entry): ModelCall[] => {
    if (entry.k !== 'model') return [];
    const { a } = entry;
    return [
      {
        seq,
        ...(entry.p ? { prompt: entry.p } : {}),
        ...(a.content === '' ? {} : { content: a.content }),
        toolCalls: a.toolCalls ?? [],
        model: a.model.id,
        usage: a.usage,
        ...(a.costUsd === undefined ? {} : { costUsd: a.costUsd }),
        finishReason: a.finishReason,
      },
    ];
  });
}

/** A JSON agent's model call: a thought that records its prompt. */
function agentCall(seq: number, data: EventData<'thought'>): ModelCall[] {
  if (!data.prompt) return [];
  const { decision } = data;
  return [
    {
      seq,
      prompt: data.prompt,
      ...(data.content === undefined ? {} : { content: data.content }),
      toolCalls:
        decision.kind === 'tool_calls'
          ? decision.calls.map((call) => ({
              id: call.callId,
              name: call.tool,
              arguments: call.args,
              ...(call.argsRef ? { argsRef: call.argsRef } : {}),
            }))
          : [],
      model: data.model.id,
      usage: data.usage,
      ...(data.costUsd === undefined ? {} : { costUsd: data.costUsd }),
      finishReason: data.finishReason,
      ...(decision.kind === 'fail' ? { error: decision.error } : {}),
    },
  ];
}

/**
 * Each tool call's outcome by call id: its completion, else its last failure that is final. A retryable
 * failure followed by nothing yet is still pending.
 */
export function callOutcomes(events: readonly RunEvent[]): Map<string, CallOutcome> {
  const outcomes = new Map<string, CallOutcome>();
  for (const event of events) {
    if (event.type === 'tool_call_completed') {
      const { callId, result, resultRef } = event.data;
      outcomes.set(callId, {
        seq: event.seq,
        content: resultRef ? '' : JSON.stringify(result ?? null, null, 2),
        isError: false,
        ...(resultRef ? { payload: resultRef } : {}),
      });
    } else if (event.type === 'tool_call_failed' && !event.data.retryable) {
      const { callId, error } = event.data;
      if (outcomes.get(callId)?.isError === false) continue;
      outcomes.set(callId, { seq: event.seq, content: `${error.code}: ${error.message}`, isError: true });
    }
  }
  return outcomes;
}

/** Where each call's arguments were recorded as an intent (`tool_call_requested`), by call id. */
export function requestedAt(events: readonly RunEvent[]): Map<string, number> {
  const at = new Map<string, number>();
  for (const event of events) if (event.type === 'tool_call_requested') at.set(event.data.callId, event.seq);
  return at;
}

/** The run's failure, when it failed. */
export function runFailure(events: readonly RunEvent[]): { seq: number; error: ErrorInfo } | undefined {
  const failed = events.findLast((event) => event.type === 'run_failed');
  return failed?.type === 'run_failed' ? { seq: failed.seq, error: failed.data.error } : undefined;
}

/** `[payload <uri> sha256=<hex> size=<n>]`: how a prompt records an offloaded tool result (`@dura/agents`). */
const PAYLOAD_TEXT = /^\[payload (\S+) sha256=([0-9a-f]{64}) size=(\d+)\]$/;

/** The reference a prompt's tool message stands for, when its text is one. */
export function payloadInText(text: string): PayloadRef | undefined {
  const match = PAYLOAD_TEXT.exec(text);
  return match ? { uri: match[1] ?? '', sha256: match[2] ?? '', size: Number(match[3]) } : undefined;
}
