import type { JetStreamClient } from '@nats-io/jetstream';
import * as z from 'zod';
import { AgentRefSchema, SIGNAL_VERSION, SUBJECTS, type JsonValue } from '@dura/contracts';
import { APPROVE_SIGNAL, CANCEL_SIGNAL, REJECT_SIGNAL, isTerminal, type RunStatus } from '@dura/core';
import type { Db } from '@dura/db';
import type { HttpResponse } from '@dura/service-kit';
import { requireScope, type Caller } from '../auth/caller';
import type { ApiRoute } from '../auth/guard';
import { publishCommand } from '../command-door';
import { BadQuery } from '../query-params';
import { parseBody, readJsonBody } from '../request-body';
import { holdingSlot, type StreamSlots } from '../stream-slots';
import { submitRun } from '../submit-route';
import { CHAT_ID, chatTenant, listTurns, turnKey } from './chat-turns';
import { answerOf, partsOf, readTurn, type TurnInput, type TurnRecord } from './turn-log';
import { openTurnStream, type TurnStreamDeps, type TurnStreamOptions } from './turn-stream';

/** What a message sent while a turn still runs does: refused with 409, or the running turn is cancelled. */
export const DOUBLE_TEXTING = ['reject', 'interrupt'] as const;
export type DoubleTexting = (typeof DOUBLE_TEXTING)[number];

export interface ChatRouteDeps {
  db: Db;
  js: JetStreamClient;
  stream: TurnStreamDeps;
  slots: StreamSlots;
  /** Default `reject`. */
  doubleTexting?: DoubleTexting;
}

/** A chat page sends its whole conversation; a megabyte of it is plenty. */
const MAX_CHAT_BODY_BYTES = 1024 * 1024;

const UiPartSchema = z.looseObject({ type: z.string() });
const UiMessageSchema = z.looseObject({
  id: z.string().min(1).max(200),
  role: z.enum(['system', 'user', 'assistant']),
  parts: z.array(UiPartSchema),
});

/** Body of `POST /chat`, as `useChat`'s default transport sends it, plus the agent each turn runs. */
export const ChatBodySchema = z.looseObject({
  id: z.string().regex(CHAT_ID, 'a chat id is 1 to 64 letters, digits, "_" or "-"'),
  messages: z.array(UiMessageSchema).min(1),
  agent: AgentRefSchema.omit({ kind: true }),
});

/**
 * The chat routes: the AI SDK's UI message stream protocol over durable runs, one run per turn
 * (`chat-<id>-<n>`, in the caller's tenant), so `useChat` (with `resume: true`) drives a Dura conversation.
 * `POST /chat` starts a turn with the last user message (the history is the earlier turns' recorded
 * answers) or answers the approval the turn waits for, and streams the turn; `GET /chat/:id/stream` streams
 * the chat's last turn from its first word; `GET /chat/:id/messages` gives the conversation as UI messages.
 */
export function chatRoutes(deps: ChatRouteDeps): ApiRoute[] {
  const reader = deps.stream.sources.runs.reader;
  const policy = deps.doubleTexting ?? 'reject';
  const turnsOf = async (caller: Caller, chatId: string): Promise<TurnRecord[]> => {
    const ids = await listTurns(deps.db, chatTenant(caller), chatId);
    return Promise.all(ids.map((id) => readTurn(reader, id)));
  };
  const streaming = (
    caller: Caller,
    req: Parameters<StreamSlots['acquire']>[1],
    runId: string,
    options?: TurnStreamOptions,
  ): HttpResponse => {
    const slot = deps.slots.acquire(caller, req);
    if ('refused' in slot) return slot.refused;
    return holdingSlot(openTurnStream(deps.stream, runId, options), slot.release);
  };

  return [
    {
      method: 'POST',
      path: '/chat',
      scope: 'submit',
      async handle({ req, caller }) {
        const body = parseBody(
          ChatBodySchema,
          await readJsonBody(req, { maxBytes: MAX_CHAT_BODY_BYTES, emptyIsObject: false, what: 'the chat' }),
          'a chat request',
        );
        const turns = await turnsOf(caller, body.id);
        const last = body.messages.at(-1)!;
        if (last.role === 'assistant') {
          const answered = await answerApproval(deps, caller, turns.at(-1), last);
          if ('status' in answered) return answered;
          return streaming(caller, req, answered.runId, { after: answered.after });
        }
        if (last.role !== 'user')
          throw new BadQuery(
            "the last message must be the user's (a new turn) or the assistant's (an approval answer)",
          );
        const current = turns.at(-1);
        // The same message again (a retried request): its turn, not a new one.
        if (current?.user?.id === last.id) return streaming(caller, req, current.runId);
        if (current && !isTerminal(current.status as RunStatus)) {
          if (policy === 'reject') return busy(body.id, turns.length - 1, current.runId);
          requireScope(caller, 'cancel', 'a message that interrupts the running turn');
          await signal(deps.js, current.runId, `chat-interrupt-${current.runId}`, CANCEL_SIGNAL, {
            reason: `interrupted by the message ${last.id}`,
          });
        }
        const input: TurnInput = {
          chatId: body.id,
          messageId: last.id,
          message: textOf(last.parts),
          history: turns.flatMap((t) =>
            t.status === 'completed' && t.user
              ? [
                  { role: 'user' as const, content: t.user.text },
                  { role: 'assistant' as const, content: answerOf(t.chunks) },
                ]
              : [],
          ),
        };
        const submitted = await submitRun(
          deps,
          caller,
          {
            agent: { kind: 'agent', ...body.agent },
            input: input as unknown as JsonValue,
            tags: ['chat'],
          },
          turnKey(body.id, turns.length),
        );
        if (submitted.status !== 202 || !('body' in submitted)) return submitted;
        const { runId } = submitted.body as { runId: string };
        return streaming(caller, req, runId);
      },
    },
    {
      method: 'GET',
      path: '/chat/:id/stream',
      scope: 'read',
      async handle({ params, req, caller }) {
        const chatId = chatIdParam(params);
        const turns = await listTurns(deps.db, chatTenant(caller), chatId);
        const current = turns.at(-1);
        // No turn yet: nothing to resume (the AI SDK's "no active stream").
        if (current === undefined) return { status: 204, text: '' };
        return streaming(caller, req, current);
      },
    },
    {
      method: 'GET',
      path: '/chat/:id/messages',
      scope: 'read',
      async handle({ params, caller }) {
        const chatId = chatIdParam(params);
        const turns = await turnsOf(caller, chatId);
        const messages = turns.flatMap((t) => [
          ...(t.user ? [{ id: t.user.id, role: 'user', parts: [{ type: 'text', text: t.user.text }] }] : []),
          ...(t.chunks.length > 0 ? [{ id: t.runId, role: 'assistant', parts: partsOf(t.chunks) }] : []),
        ]);
        return {
          status: 200,
          body: { id: chatId, messages, turns: turns.map(({ runId, status }) => ({ runId, status })) },
        };
      },
    },
  ];
}

function chatIdParam(params: Record<string, string>): string {
  const id = params['id'] ?? '';
  if (!CHAT_ID.test(id))
    throw new BadQuery('path parameter id is not a chat id: 1 to 64 letters, digits, "_" or "-"');
  return id;
}

function textOf(parts: readonly { type: string; [k: string]: unknown }[]): string {
  const text = parts
    .flatMap((p) => (p.type === 'text' && typeof p['text'] === 'string' ? [p['text']] : []))
    .join('\n');
  if (text.trim() === '') throw new BadQuery('the user message has no text: send a message with a text part');
  return text;
}

function busy(chatId: string, turn: number, runId: string): HttpResponse {
  return {
    status: 409,
    body: {
      error: {
        code: 'turn_in_progress',
        message: `turn ${turn} of chat ${chatId} is still running (run ${runId}): wait for its answer and send again, or stop it (POST /runs/${runId}/cancel) first. This server refuses a message sent while a turn runs (PROJECTOR_CHAT_DOUBLE_TEXTING=reject).`,
      },
    },
  };
}

/** The page answered the approval the turn waits for: send the verdict to the run, continue after the wait. */
async function answerApproval(
  deps: ChatRouteDeps,
  caller: Caller,
  current: TurnRecord | undefined,
  message: z.infer<typeof UiMessageSchema>,
): Promise<{ runId: string; after: { seq: number; waitId: string } } | HttpResponse> {
  requireScope(caller, 'signal', 'an approval answer');
  if (!current || message.id !== current.runId)
    return {
      status: 409,
      body: {
        error: {
          code: 'approval_not_pending',
          message: `message ${message.id} is not the answer of this chat's last turn: reload the chat`,
        },
      },
    };
  const responded = message.parts.flatMap((p) => {
    const approval = p['approval'] as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
    return p['state'] === 'approval-responded' && typeof approval?.id === 'string' ? [approval] : [];
  });
  const waiting = current.awaiting;
  const answer = responded.find((a) => a.id === waiting?.waitId);
  if (!waiting || !answer)
    return {
      status: 409,
      body: {
        error: {
          code: 'approval_not_pending',
          message: `turn ${current.runId} waits for no approval the message answers${waiting ? ` (it waits for ${waiting.waitId})` : ''}: reload the chat`,
        },
      },
    };
  // Only the boolean true approves; anything else is a refusal (gates fail closed).
  const approved = answer.approved === true;
  await signal(
    deps.js,
    current.runId,
    `chat-${waiting.waitId}`,
    approved ? APPROVE_SIGNAL : REJECT_SIGNAL,
    approved
      ? { approved: true }
      : {
          approved: false,
          reason: typeof answer.reason === 'string' ? answer.reason : 'refused in the chat',
        },
  );
  return { runId: current.runId, after: waiting };
}

async function signal(
  js: JetStreamClient,
  runId: string,
  signalId: string,
  name: string,
  payload: JsonValue,
): Promise<void> {
  await publishCommand(js, {
    subject: SUBJECTS.signal,
    body: { v: SIGNAL_VERSION, runId, signalId, name, payload },
    msgID: `signal:${runId}:${signalId}`,
    runId,
    what: `the signal "${name}" for run ${runId}`,
  });
}
