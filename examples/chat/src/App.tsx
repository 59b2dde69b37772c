import { useEffect, useState } from 'react';
import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';

/** The chat this page shows: `?chat=<id>` in the address, a new one when absent (kept across reloads). */
function chatIdOfPage(): string {
  const url = new URL(window.location.href);
  let id = url.searchParams.get('chat');
  if (!id) {
    id = `c${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
    url.searchParams.set('chat', id);
    window.history.replaceState(null, '', url);
  }
  return id;
}

/** Loads the conversation the server recorded, then shows it live. */
export function App() {
  const [chatId] = useState(chatIdOfPage);
  const [initial, setInitial] = useState<UIMessage[] | undefined>();
  const [failed, setFailed] = useState<string | undefined>();
  useEffect(() => {
    fetch(`/api/chat/${chatId}/messages`)
      .then(async (res) => {
        if (!res.ok) throw new Error(`GET /chat/${chatId}/messages: ${res.status} ${await res.text()}`);
        return ((await res.json()) as { messages: UIMessage[] }).messages;
      })
      .then(setInitial, (err: unknown) => setFailed(String(err)));
  }, [chatId]);
  if (failed) return <p data-testid="error">{failed}</p>;
  if (!initial) return <p>Loading…</p>;
  return <Chat chatId={chatId} initial={initial} />;
}

const transport = new DefaultChatTransport({
  api: '/api/chat',
  // The agent each turn runs (the chat route starts one durable run per user message).
  body: { agent: { name: 'chat-assistant' } },
});

function Chat({ chatId, initial }: { chatId: string; initial: UIMessage[] }) {
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id: chatId,
    messages: initial,
    transport,
    // A reload mid-answer picks the answer up again (GET /api/chat/:id/stream).
    resume: true,
    // An approval answered on the page goes back to the run at once.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState('');
  return (
    <main style={{ fontFamily: 'system-ui', maxWidth: 720, margin: '2rem auto' }}>
      <h1>Dura chat</h1>
      <ol data-testid="messages" style={{ listStyle: 'none', padding: 0 }}>
        {messages.map((m) => (
          <li key={m.id} data-testid={`message-${m.role}`} style={{ margin: '1rem 0' }}>
            <strong>{m.role === 'user' ? 'You' : 'Assistant'}</strong>
            {m.parts.map((part, i) => {
              if (part.type === 'text')
                return (
                  <p key={i} data-testid="text" style={{ whiteSpace: 'pre-wrap' }}>
                    {part.text}
                  </p>
                );
              if (part.type === 'dynamic-tool')
                return (
                  <div key={i} data-testid="tool" data-state={part.state}>
                    <code>{part.toolName}</code> {part.state}
                    {part.state === 'approval-requested' && (
                      <>
                        {' '}
                        <button
                          onClick={() =>
                            void addToolApprovalResponse({ id: part.approval.id, approved: true })
                          }
                        >
                          Approve
                        </button>
                        <button
                          onClick={() =>
                            void addToolApprovalResponse({ id: part.approval.id, approved: false })
                          }
                        >
                          Reject
                        </button>
                      </>
                    )}
                  </div>
                );
              return null;
            })}
          </li>
        ))}
      </ol>
      {error && <p data-testid="error">{error.message}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (input.trim() === '') return;
          void sendMessage({ text: input });
          setInput('');
        }}
      >
        <input
          data-testid="input"
          value={input}
          onChange={(e) => setInput(e.target.value)}
          placeholder="Say something"
        />
        <button type="submit">Send</button> <span data-testid="status">{status}</span>
      </form>
    </main>
  );
}
