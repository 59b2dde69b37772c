import { describe, expect, it } from 'vitest';
import type { RunEvent, TokenMessage } from '@dura/contracts';
import { createTokenFeed } from '@dura/core';
import { RunLog, thoughtData } from '@dura/core/testing';
import { createTurnChunks, type UiChunk } from '../src/chat/turn-chunks';
import { applyEvent, partsOf, textParts } from '../src/chat/turn-log';

/** A turn's chunks, fed as the chat stream feeds them: log events through the token feed, text pieces too. */
function turnOf(runId: string) {
  const turn = createTurnChunks(runId);
  const feed = createTokenFeed(runId);
  const chunks: UiChunk[] = [];
  const shown: string[] = [];
  const note = (out: UiChunk[]) => {
    chunks.push(...out);
    shown.push(textParts(chunks).join('|'));
  };
  return {
    turn,
    chunks,
    shown,
    event: (e: RunEvent) => note(applyEvent(turn, feed, e)),
    token: (attempt: string, n: number, delta: string, decision = 0) => {
      const message: TokenMessage = { runId, decision, call: 0, attempt, n, delta };
      note(feed.token(message).flatMap((e) => turn.feed(e)));
    },
  };
}

describe('a chat turn as UI message chunks', () => {
  it('drops an attempt asked again (reset-step) and ends with the recorded answer, never a mix', () => {
    const log = new RunLog('turn-a').request().start();
    const t = turnOf('turn-a');
    for (const e of log.events) t.event(e);
    t.token('a1', 0, 'Once ');
    t.token('a1', 1, 'upon');
    t.token('b2', 0, 'A long ');
    t.token('a1', 2, ' a time');
    t.token('b2', 1, 'time ago.');
    log.add('thought', { ...thoughtData({ kind: 'complete', output: 'x' }), content: 'A long time ago.' });
    log.finish();
    for (const e of log.events.slice(2)) t.event(e);

    expect(t.chunks[0]).toEqual({ type: 'start', messageId: 'turn-a' });
    expect(t.chunks.map((c) => c.type)).toContain('reset-step');
    expect(textParts(t.chunks)).toEqual(['A long time ago.']);
    for (const shown of t.shown)
      expect('Once upon'.startsWith(shown) || 'A long time ago.'.startsWith(shown)).toBe(true);
    expect(t.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(t.turn.ended).toBe('completed');
  });

  it('shows the recorded answer when the streamed text lost a piece', () => {
    const log = new RunLog('turn-g').request().start();
    const t = turnOf('turn-g');
    for (const e of log.events) t.event(e);
    t.token('a1', 0, 'Hel');
    t.token('a1', 2, 'world');
    log.add('thought', { ...thoughtData({ kind: 'complete' }), content: 'Hello world' });
    t.event(log.events.at(-1)!);
    expect(textParts(t.chunks)).toEqual(['Hello world']);
  });

  it('streams tool calls, their results and an approval the page answers', () => {
    const log = new RunLog('turn-t').request().start();
    log.add('thought', {
      ...thoughtData({
        kind: 'tool_calls',
        calls: [{ callId: 'call-1', tool: 'pay.charge', args: { cents: 5 } }],
      }),
      content: 'Paying.',
    });
    log.add('tool_call_requested', {
      callId: 'call-1',
      step: 1,
      tool: 'pay.charge',
      args: { cents: 5 },
      idempotencyKey: 'k1',
    });
    log.add('wait_requested', { waitId: 'w1', kind: 'approval', callId: 'call-1' });
    const t = turnOf('turn-t');
    for (const e of log.events) t.event(e);
    expect(t.turn.awaitingApproval).toBe('w1');
    expect(partsOf(t.chunks).at(-1)).toMatchObject({
      type: 'dynamic-tool',
      toolName: 'pay.charge',
      toolCallId: 'call-1',
      state: 'approval-requested',
      approval: { id: 'w1' },
    });
    log.add('signal_received', { signalId: 's1', name: 'approve', payload: { approved: true } });
    log.complete('call-1', { charged: 5 });
    for (const e of log.events.slice(-2)) t.event(e);
    expect(t.turn.awaitingApproval).toBeUndefined();
    expect(partsOf(t.chunks)).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Paying.', state: 'done' },
      {
        type: 'dynamic-tool',
        toolName: 'pay.charge',
        toolCallId: 'call-1',
        state: 'output-available',
        input: { cents: 5 },
        output: { charged: 5 },
        approval: { id: 'w1', approved: true },
      },
    ]);
  });

  it('a payload other than { approved: true } answers the approval as refused', () => {
    const log = new RunLog('turn-r').request().start();
    log.add('thought', {
      ...thoughtData({ kind: 'tool_calls', calls: [{ callId: 'call-1', tool: 'pay.charge', args: {} }] }),
    });
    log.add('tool_call_requested', {
      callId: 'call-1',
      step: 1,
      tool: 'pay.charge',
      args: {},
      idempotencyKey: 'k1',
    });
    log.add('wait_requested', { waitId: 'w1', kind: 'approval', callId: 'call-1' });
    log.add('signal_received', { signalId: 's1', name: 'approve', payload: 'yes' });
    const t = turnOf('turn-r');
    for (const e of log.events) t.event(e);
    expect(t.chunks.at(-1)).toEqual({ type: 'tool-approval-response', approvalId: 'w1', approved: false });
  });
});
