import { useState } from 'react';
import type { PayloadRef } from '@dura/contracts';
import type { AnswerFacts, ChatCallView, ChatItem, Conversation } from '../model/conversation';
import { eventLabel } from '../model/event-numbers';
import { dollars } from '../model/format';
import { useRunPage } from './run-page-context';

/** Above this many characters or lines, a message shows its start and a button for the rest. */
const LONG_CHARS = 600;
const LONG_LINES = 12;

const resultId = (callId: string) => `chat-result-${callId}`;

/**
 * The run's model conversations as a chat, one per chain of calls: the system and user messages, each
 * answer with its tokens and cost, the tool calls it asked for (arguments folded, linked to their results),
 * the results and errors. Every message links to the event it was read from.
 */
export function ConversationView({
  conversations,
  answering,
}: {
  conversations: readonly Conversation[];
  /** The answer streaming in, shown after the last conversation until its thought is recorded. */
  answering: string | undefined;
}) {
  return (
    <div className="conversations" data-testid="conversation">
      {conversations.map((conversation, index) => (
        <section key={conversation.key} className="chat-thread" aria-label={`Conversation ${index + 1}`}>
          <h2>
            {conversations.length > 1
              ? `Conversation ${index + 1} of ${conversations.length}`
              : 'Conversation'}
            <span className="muted">
              {' · '}
              {conversation.calls} model call{conversation.calls === 1 ? '' : 's'}
            </span>
          </h2>
          {conversation.key === 'unrecorded' && (
            <p className="muted">These calls were recorded without their prompts: their answers only.</p>
          )}
          <ol className="chat">
            {conversation.items.map((item, i) => (
              <Message key={`${item.seq}-${i}`} item={item} />
            ))}
            {answering !== undefined && index === conversations.length - 1 && (
              <li className="msg msg-assistant" data-role="assistant" data-testid="chat-answering">
                <header>
                  <strong>assistant</strong> <span className="muted">answering…</span>
                </header>
                <div className="content">{answering}</div>
              </li>
            )}
          </ol>
        </section>
      ))}
    </div>
  );
}

function Message({ item }: { item: ChatItem }) {
  const { numberOf, onSelect } = useRunPage();
  const link = (
    <button type="button" className="linkish event-link" onClick={() => onSelect(item.seq)}>
      {eventLabel(numberOf, item.seq)}
    </button>
  );
  switch (item.role) {
    case 'system':
    case 'user':
      return (
        <li className={`msg msg-${item.role}`} data-role={item.role}>
          <header>
            <strong>{item.role}</strong> {link}
          </header>
          <Text text={item.content} />
        </li>
      );
    case 'assistant':
      return (
        <li className="msg msg-assistant" data-role="assistant">
          <header>
            <strong>assistant</strong> {link}
            {item.answer ? <Facts facts={item.answer} /> : <span className="muted"> (sent as history)</span>}
          </header>
          {item.content !== undefined && item.content !== '' && <Text text={item.content} />}
          {item.toolCalls.map((call) => (
            <ToolCall key={call.id} call={call} />
          ))}
        </li>
      );
    case 'tool':
      return (
        <li
          className={`msg msg-tool${item.isError ? ' failed' : ''}`}
          data-role="tool"
          id={resultId(item.callId)}
          data-call-id={item.callId}
        >
          <header>
            <strong>tool</strong> <code>{item.name}</code> {link}
            <span className="muted">
              {' '}
              {item.isError ? 'failed' : 'result'} of call {item.callId}
            </span>
          </header>
          {item.payload ? <Payload payload={item.payload} what="The result" /> : <Text text={item.content} />}
        </li>
      );
    case 'error':
      return (
        <li className="msg msg-error" data-role="error" role="alert">
          <header>
            <strong>error</strong> {link}
          </header>
          <div className="content">
            <code>{item.code}</code>: {item.message}
          </div>
        </li>
      );
  }
}

/** What an answer cost and why it stopped. */
function Facts({ facts }: { facts: AnswerFacts }) {
  return (
    <span className="muted" data-testid="chat-usage">
      {' · '}
      {facts.model} · {facts.usage.inputTokens} in / {facts.usage.outputTokens} out tokens
      {facts.costUsd === undefined ? '' : ` · ${dollars(facts.costUsd)}`} · {facts.finishReason}
    </span>
  );
}

/** A call the model asked for: its name and arguments, folded; the intent that recorded it; its result. */
function ToolCall({ call }: { call: ChatCallView }) {
  const { numberOf, onSelect } = useRunPage();
  const line = JSON.stringify(call.arguments);
  return (
    <details className="tool-call" data-testid="chat-tool-call" data-call-id={call.id}>
      <summary>
        <code>
          {call.name}({line.length > 80 ? `${line.slice(0, 80)}…` : line})
        </code>
      </summary>
      {call.argsRef ? (
        <Payload payload={call.argsRef} what="The arguments" />
      ) : (
        <pre className="json" data-testid="chat-tool-args">
          {JSON.stringify(call.arguments, null, 2)}
        </pre>
      )}
      <p className="call-links">
        call <code>{call.id}</code>
        {call.requestedSeq !== undefined && (
          <>
            {' · requested at '}
            <button type="button" className="linkish" onClick={() => onSelect(call.requestedSeq as number)}>
              {eventLabel(numberOf, call.requestedSeq)}
            </button>
          </>
        )}
        {' · '}
        {call.answered ? (
          <button
            type="button"
            className="linkish"
            onClick={() => document.getElementById(resultId(call.id))?.scrollIntoView({ block: 'center' })}
          >
            go to its result
          </button>
        ) : (
          <span className="muted">no result yet</span>
        )}
      </p>
    </details>
  );
}

function Payload({ payload, what }: { payload: PayloadRef; what: string }) {
  return (
    <p className="content payload" data-testid="chat-payload">
      {what} ({payload.size.toLocaleString('en')} bytes) is in the object store: <code>{payload.uri}</code>
    </p>
  );
}

/** A message's text, wrapped; a long one shows its start and a button for the rest. */
function Text({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  const lines = text.split('\n');
  const long = text.length > LONG_CHARS || lines.length > LONG_LINES;
  if (!long || open)
    return (
      <div className="content">
        {text}
        {long && (
          <button type="button" className="linkish more" onClick={() => setOpen(false)}>
            Show less
          </button>
        )}
      </div>
    );
  const start = lines.slice(0, LONG_LINES).join('\n').slice(0, LONG_CHARS);
  return (
    <div className="content">
      {start}…
      <button type="button" className="linkish more" onClick={() => setOpen(true)}>
        Show all ({text.length.toLocaleString('en')} characters)
      </button>
    </div>
  );
}

export type RunView = 'events' | 'conversation';

/** The run page's two views of its body: the events' waterfall, and (when the run talked to a model) the chat. */
export function ViewTabs({ view, onView }: { view: RunView; onView: (view: RunView) => void }) {
  const tab = (name: RunView, label: string) => (
    <button type="button" role="tab" aria-selected={view === name} onClick={() => onView(name)}>
      {label}
    </button>
  );
  return (
    <div className="view-tabs" role="tablist" aria-label="Run views">
      {tab('events', 'Events')}
      {tab('conversation', 'Conversation')}
    </div>
  );
}
