// The OpenAPI paths of the chat routes (chat/chat-routes.ts): the AI SDK's UI message stream over runs.
import { idParam, json } from './openapi-console';

const chatId = idParam('The chat id (1 to 64 letters, digits, "_" or "-").');
const uiStream = {
  description:
    'The turn as the AI SDK’s UI message stream (header `x-vercel-ai-ui-message-stream: v1`): `data:` JSON chunks `start`, `start-step`/`finish-step`/`reset-step`, `text-start`/`text-delta`/`text-end`, `tool-input-available`, `tool-output-available`/`tool-output-error`, `tool-approval-request`/`tool-approval-response`, `error`, `finish`, then `data: [DONE]`. It closes when the run ends or waits for an approval.',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
};

export function chatPaths() {
  return {
    '/chat': {
      post: {
        summary:
          'One message of a chat, as `useChat` sends it (`{"id", "messages", "agent": {"name", "version"?}}`), answered with the turn as a UI message stream (docs/chat.md). A last message of the user starts the next turn, a run `chat-<id>-<n>` of the caller’s tenant (scope `submit`) with the earlier turns’ recorded answers as history; the same message again streams its turn. A last message of the assistant answers the approval the turn waits for (scope `signal`). A message sent while the turn runs is refused (409 `turn_in_progress`) or interrupts it (`PROJECTOR_CHAT_DOUBLE_TEXTING=interrupt`, scope `cancel`).',
        responses: {
          '200': uiStream,
          '400': json('Error', 'Not a chat request, or a user message without text.'),
          '409': json(
            'Error',
            '`turn_in_progress`: a turn still runs; `approval_not_pending`: the turn waits for no such approval; `run_id_conflict`.',
          ),
          '429': json('Error', 'Too many live streams open for this credential or in total.'),
        },
      },
    },
    '/chat/{id}/stream': {
      get: {
        summary:
          'The chat’s last turn as a UI message stream from its first word (what `useChat` with `resume: true` asks for after a reload); 204 when the chat has no turn (scope `read`).',
        parameters: [chatId],
        responses: { '200': uiStream, '204': { description: 'No turn yet: nothing to resume.' } },
      },
    },
    '/chat/{id}/messages': {
      get: {
        summary:
          'The chat as UI messages (`{"id", "messages", "turns": [{"runId", "status"}]}`): each turn’s user message and what its log recorded of the answer, for a page to start `useChat` with (scope `read`).',
        parameters: [chatId],
        responses: {
          '200': {
            description: 'The conversation.',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
        },
      },
    },
  };
}
