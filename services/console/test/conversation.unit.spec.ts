import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, EventData, EventType, RunEvent } from '@dura/contracts';
import { runEvent } from '@dura/core/testing';
import { encodeJournal, type JournalEntry } from '@dura/code-agents/engine';
import { answeringText, buildConversations, type ChatItem } from '../src/model/conversation';

/** A run's events with their seqs stamped as a reader sees them (from 10, as in a shared stream). */
const log = (...drafts: [EventType, unknown][]): RunEvent[] =>
  drafts.map(
    ([type, data], i) => runEvent(type, data as EventData<typeof type>, { seq: 10 + i }) as RunEvent,
  );

/** A prompt record as the planner writes it: `messages` new since `previous`, under a hash of both. */
function prompt(previous: { hash: string } | null, messages: ChatMessage[]) {
  const prefix = previous?.hash ?? null;
  const hash = createHash('sha256')
    .update(`${prefix ?? ''}\n${JSON.stringify(messages)}`)
    .digest('hex');
  return { hash, prefix, messages };
}

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });
const model = { id: 'gpt-x', promptVersion: '1' };
const ref = { uri: 'dura-obj://dura_payloads/' + 'ab'.repeat(32), sha256: 'ab'.repeat(32), size: 300_000 };

/** The chat as short rows: role, what it says, and the event it links to. */
function rows(items: readonly ChatItem[]): unknown[] {
  return items.map((item) => {
    switch (item.role) {
      case 'assistant':
        return [
          item.answer ? 'answer' : 'assistant',
          item.content ?? '',
          item.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.arguments)})${c.answered ? '→' : ''}`),
          item.seq,
        ];
      case 'tool':
        return ['tool', item.name, item.content, item.seq];
      case 'error':
        return ['error', `${item.code}: ${item.message}`, item.seq];
      default:
        return [item.role, item.content, item.seq];
    }
  });
}

const requested = (callId: string, tool: string, args: object, extra: object = {}) => [
  'tool_call_requested',
  { callId, step: 1, tool, args, idempotencyKey: `k-${callId}`, ...extra },
];
const completed = (callId: string, result: unknown, extra: object = {}) => [
  'tool_call_completed',
  { callId, idempotencyKey: `k-${callId}`, result, attempt: 1, deduped: false, durationMs: 5, ...extra },
];

describe('buildConversations', () => {
  // A JSON agent: ask for a tool, read its result, answer.
  const first = prompt(null, [
    { role: 'system', content: 'You look up weather.' },
    { role: 'user', content: 'Weather in Oslo?' },
  ]);
  const second = prompt(first, [
    {
      role: 'assistant',
      content: 'Looking it up.',
      toolCalls: [{ id: 'r1-c1', name: 'weather.get', arguments: { city: 'Oslo' } }],
    },
    { role: 'tool', toolCallId: 'r1-c1', name: 'weather.get', content: '{"celsius":-3}' },
  ]);
  const asked = {
    step: 0,
    model,
    content: 'Looking it up.',
    decision: {
      kind: 'tool_calls',
      calls: [{ callId: 'r1-c1', tool: 'weather.get', args: { city: 'Oslo' } }],
    },
    usage: usage(40, 12),
    finishReason: 'tool_calls',
    prompt: first,
    costUsd: 0.0012,
  };
  const answered = {
    step: 1,
    model,
    content: 'It is -3 °C in Oslo.',
    decision: { kind: 'complete', output: 'It is -3 °C in Oslo.' },
    usage: usage(70, 9),
    finishReason: 'stop',
    prompt: second,
    costUsd: 0.002,
  };
  const events = log(
    ['run_requested', { request: { v: 1, runId: 'r1', agent: { kind: 'agent', name: 'w' } } }],
    ['run_started', {}],
    ['thought', asked],
    requested('r1-c1', 'weather.get', { city: 'Oslo' }) as [EventType, unknown],
    completed('r1-c1', { celsius: -3 }) as [EventType, unknown],
    ['thought', answered],
    ['run_completed', { output: 'It is -3 °C in Oslo.' }],
  );

  it('given a JSON agent that asked for a tool, then answered: system, user, the call, its result, the answer, once each', () => {
    const [chat, ...others] = buildConversations(events);
    expect(others).toEqual([]);
    expect(chat).toMatchObject({ key: first.hash, calls: 2 });
    expect(rows(chat!.items)).toEqual([
      ['system', 'You look up weather.', 12],
      ['user', 'Weather in Oslo?', 12],
      ['answer', 'Looking it up.', ['weather.get({"city":"Oslo"})→'], 12],
      ['tool', 'weather.get', '{\n  "celsius": -3\n}', 14],
      ['answer', 'It is -3 °C in Oslo.', [], 15],
    ]);
    // Each answer carries its tokens and cost; the call links to the intent that recorded its arguments.
    const answer = chat!.items[2];
    expect(answer).toMatchObject({
      answer: { model: 'gpt-x', usage: usage(40, 12), costUsd: 0.0012, finishReason: 'tool_calls' },
      toolCalls: [{ id: 'r1-c1', requestedSeq: 13, answered: true }],
    });
  });

  it('given the run still going: the result shows as soon as its event is in, before the next model call', () => {
    const [chat] = buildConversations(events.slice(0, 5));
    expect(rows(chat!.items).map((row) => (row as unknown[])[0])).toEqual([
      'system',
      'user',
      'answer',
      'tool',
    ]);
    // Before the result, the call is shown as asked and not answered.
    const [early] = buildConversations(events.slice(0, 4));
    expect(early!.items.at(-1)).toMatchObject({ role: 'assistant', toolCalls: [{ answered: false }] });
  });

  it('given a context summary: the call after it starts a conversation of its own', () => {
    const summarized = prompt(null, [
      { role: 'system', content: 'You look up weather.' },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'user', content: 'Summary of the earlier steps of this run:\nOslo is at -3.' },
    ]);
    const chats = buildConversations([
      ...events.slice(0, 5),
      ...log(['thought', { ...answered, prompt: summarized }]).map((e) => ({ ...e, seq: 30 })),
    ]);
    expect(chats.map((c) => [c.key, c.calls])).toEqual([
      [first.hash, 1],
      [summarized.hash, 1],
    ]);
    expect(rows(chats[1]!.items).map((row) => (row as unknown[])[0])).toEqual([
      'system',
      'user',
      'user',
      'answer',
    ]);
  });

  it('given a run that talked to no model (a scripted plan): no conversation', () => {
    const scripted = log(
      ['run_started', {}],
      ['thought', { ...asked, prompt: undefined, model: { id: 'scripted', promptVersion: '' } }],
    );
    expect(buildConversations(scripted)).toEqual([]);
  });

  it('given a model call that failed: the chat ends with the error the run failed with', () => {
    const failed = log(
      ['run_started', {}],
      ['thought', asked],
      requested('r1-c1', 'weather.get', { city: 'Oslo' }) as [EventType, unknown],
      [
        'tool_call_failed',
        {
          callId: 'r1-c1',
          idempotencyKey: 'k',
          error: { code: 'timeout', message: 'slow' },
          attempt: 1,
          retryable: true,
        },
      ],
      [
        'tool_call_failed',
        {
          callId: 'r1-c1',
          idempotencyKey: 'k',
          error: { code: 'upstream_down', message: 'no weather today' },
          attempt: 2,
          retryable: false,
        },
      ],
      ['run_failed', { error: { code: 'model_request_rejected', message: 'HTTP 400: context too long' } }],
    );
    const [chat] = buildConversations(failed);
    expect(rows(chat!.items).slice(2)).toEqual([
      ['answer', 'Looking it up.', ['weather.get({"city":"Oslo"})→'], 11],
      ['tool', 'weather.get', 'upstream_down: no weather today', 14],
      ['error', 'model_request_rejected: HTTP 400: context too long', 15],
    ]);
    expect(chat!.items[3]).toMatchObject({ isError: true });
    // The first call failed: nothing was answered, and the chat is the error alone.
    const [only] = buildConversations(
      log(['run_started', {}], ['run_failed', { error: { code: 'model_unavailable', message: 'HTTP 503' } }]),
    );
    expect(only).toMatchObject({ calls: 0, items: [{ role: 'error', code: 'model_unavailable', seq: 11 }] });
    // A run that failed without ever asking a model has no conversation.
    expect(buildConversations(log(['run_failed', { error: { code: 'tool_failed', message: 'x' } }]))).toEqual(
      [],
    );
  });

  it('given a model that decided to fail the run: its answer, then its error', () => {
    const [chat] = buildConversations(
      log([
        'thought',
        { ...asked, decision: { kind: 'fail', error: { code: 'cannot', message: 'no city' } } },
      ]),
    );
    expect(rows(chat!.items).slice(2)).toEqual([
      ['answer', 'Looking it up.', [], 10],
      ['error', 'cannot: no city', 10],
    ]);
  });

  it('given offloaded arguments and results: the chat names the payload instead of its bytes', () => {
    const big = log(
      [
        'thought',
        {
          ...asked,
          decision: {
            kind: 'tool_calls',
            calls: [{ callId: 'r1-c1', tool: 'doc.put', args: { $payload: ref.uri }, argsRef: ref }],
          },
        },
      ],
      requested('r1-c1', 'doc.put', { $payload: ref.uri }, { argsRef: ref }) as [EventType, unknown],
      completed('r1-c1', null, { resultRef: ref }) as [EventType, unknown],
    );
    const [chat] = buildConversations(big);
    expect(chat!.items[2]).toMatchObject({ toolCalls: [{ name: 'doc.put', argsRef: ref }] });
    expect(chat!.items[3]).toMatchObject({ role: 'tool', content: '', payload: ref, seq: 12 });
    // A code agent's prompt records an offloaded result as its reference: read back as one.
    const text = `[payload ${ref.uri} sha256=${ref.sha256} size=${ref.size}]`;
    const [code] = buildConversations(
      log([
        'thought',
        codeStep([
          modelEntry(prompt(null, [{ role: 'tool', toolCallId: 't', name: 'doc.get', content: text }]), 'ok'),
        ]),
      ]),
    );
    expect(code!.items[0]).toMatchObject({ role: 'tool', content: '', payload: ref });
  });
});

/** A code step's thought whose journal holds `entries`. */
function codeStep(entries: JournalEntry[], decision: object = { kind: 'complete', output: 'done' }) {
  return {
    step: 0,
    model,
    content: encodeJournal(entries),
    decision,
    usage: usage(0, 0),
    finishReason: 'stop',
  };
}

function modelEntry(
  p: ReturnType<typeof prompt> | undefined,
  content: string,
  toolCalls?: { id: string; name: string; arguments: object }[],
): JournalEntry {
  return {
    k: 'model',
    h: `h-${content}`,
    a: {
      content,
      ...(toolCalls ? { toolCalls: toolCalls as never } : {}),
      usage: usage(20, 5),
      model,
      finishReason: toolCalls ? 'tool_calls' : 'stop',
      costUsd: 0.001,
    },
    ...(p ? { p } : {}),
  };
}

describe('buildConversations of a code agent', () => {
  it('given ctx.model calls in two chains (a plan, then a tool loop): one conversation per chain, each in order', () => {
    const plan = prompt(null, [
      { role: 'system', content: 'Plan.' },
      { role: 'user', content: 'Ship it' },
    ]);
    const loop1 = prompt(null, [
      { role: 'system', content: 'Act.' },
      { role: 'user', content: 'Step 1' },
    ]);
    const call = { id: 'call_9', name: 'echo', arguments: { text: 'hi' } };
    const loop2 = prompt(loop1, [
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', toolCallId: 'call_9', name: 'echo', content: '"hi"' },
    ]);
    const chats = buildConversations(
      log(
        [
          'thought',
          codeStep([{ k: 'now', v: 1 }, modelEntry(plan, '1. echo'), modelEntry(loop1, '', [call])], {
            kind: 'tool_calls',
            calls: [{ callId: 'r1-c1', tool: 'echo', args: { text: 'hi' } }],
          }),
        ],
        completed('r1-c1', 'hi') as [EventType, unknown],
        ['thought', codeStep([modelEntry(loop2, 'Echoed hi.')])],
      ),
    );
    expect(chats.map((c) => [c.key, c.calls])).toEqual([
      [plan.hash, 1],
      [loop1.hash, 2],
    ]);
    expect(rows(chats[0]!.items)).toEqual([
      ['system', 'Plan.', 10],
      ['user', 'Ship it', 10],
      ['answer', '1. echo', [], 10],
    ]);
    // The loop's history (its earlier answer) is not shown twice; the result is the one its prompt sent.
    expect(rows(chats[1]!.items)).toEqual([
      ['system', 'Act.', 10],
      ['user', 'Step 1', 10],
      ['answer', '', ['echo({"text":"hi"})→'], 10],
      ['tool', 'echo', '"hi"', 12],
      ['answer', 'Echoed hi.', [], 12],
    ]);
  });

  it('given a journal recorded without prompts: its answers, in one conversation of their own', () => {
    const chats = buildConversations(
      log(['thought', codeStep([modelEntry(undefined, 'a'), modelEntry(undefined, 'b')])]),
    );
    expect(chats.map((c) => [c.key, c.calls, rows(c.items)])).toEqual([
      [
        'unrecorded',
        2,
        [
          ['answer', 'a', [], 10],
          ['answer', 'b', [], 10],
        ],
      ],
    ]);
  });
});

describe('answeringText', () => {
  const answer = (decision: number, text: string, recorded = false) => ({
    decision,
    call: 0,
    text,
    recorded,
    missing: false,
  });

  it('is the newest answer still streaming: recorded answers and empty attempts are not shown', () => {
    expect(answeringText([])).toBeUndefined();
    expect(answeringText([answer(1, 'done', true), answer(2, 'partial'), answer(3, '')])).toBe('partial');
    expect(answeringText([answer(1, 'done', true), answer(2, 'also done', true)])).toBeUndefined();
  });
});
