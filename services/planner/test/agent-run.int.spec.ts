// A registered agent decided by an OpenAI-compatible model (a local server speaking the API), end to end on
// a real NATS: pinning, the conversation recorded once, control tools, budgets and live token deltas.
import { describe, expect, it, vi } from 'vitest';
import { RUN_REQUEST_VERSION, SIGNAL_VERSION, SUBJECTS, type RunEvent } from '@dura/contracts';
import { readStoredTokens } from '@dura/event-store';
import { fold } from '@dura/core';
import { retryUntil, useFakeLlmServer, useTestInfra, type FakeLlmReply } from '@dura/testing';
import { AgentRegistry } from '@dura/agents';
import { eventually, typesOf } from './support';
import { agentPlanner, usePlanner } from './planner-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const replies = new Map<string, (index: number) => FakeLlmReply>();
const llm = useFakeLlmServer({
  provider: 'openai',
  respond: ({ body }) => {
    const runKey = String((body.messages as { content?: string }[])[1]?.content ?? '');
    const script = replies.get(runKey);
    if (!script)
      return { kind: 'status', status: 400, body: { error: { message: `no script for ${runKey}` } } };
    const calls = llm().requests.filter(
      (r) => (r.body.messages as { content?: string }[])[1]?.content === runKey,
    );
    return script(calls.length - 1);
  },
});
const env = usePlanner(infra, () =>
  agentPlanner(
    new AgentRegistry({
      agents: [
        {
          name: 'helper',
          version: '1',
          systemPrompt: 'You help.',
          model: { provider: 'openai', model: 'fake-1', baseUrl: llm().url, maxTokens: 100, maxAttempts: 2 },
          tools: ['echo'],
        },
        {
          name: 'frugal',
          version: '1',
          systemPrompt: 'You help cheaply.',
          model: { provider: 'openai', model: 'fake-1', baseUrl: llm().url, maxTokens: 100 },
          tools: ['echo'],
          budget: { maxTokens: 100 },
        },
      ],
      prices: { 'fake-1': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    }),
  ),
);

async function submit(runId: string, agent: string, input: string): Promise<void> {
  const request = { v: RUN_REQUEST_VERSION, runId, agent: { kind: 'agent', name: agent }, input };
  await env.setup.js.publish(SUBJECTS.submit, JSON.stringify(request), { msgID: runId });
}

function untilLast(runId: string, type: string): Promise<RunEvent[]> {
  return eventually(async () => {
    const log = await env.setup.store.read(runId);
    return log.at(-1)?.type === type ? log : undefined;
  }, `${runId} to reach ${type}`);
}

describe('a registered agent on an OpenAI-compatible model', () => {
  it('is pinned at start, waits for a signal through a control tool, and completes with the answer', async () => {
    replies.set('input-a1', (index) =>
      index === 0
        ? {
            kind: 'message',
            content: 'I will ask the user.',
            toolCalls: [{ id: 'x1', name: 'dura__wait_for_signal', arguments: { name: 'reply' } }],
          }
        : { kind: 'message', content: 'The user said yes.', usage: { inputTokens: 40, outputTokens: 10 } },
    );
    await submit('agent-a1', 'helper', 'input-a1');
    const waiting = await untilLast('agent-a1', 'wait_requested');
    const started = waiting.find((e) => e.type === 'run_started');
    expect(started?.data).toMatchObject({
      pinned: { agent: 'helper', version: '1', provider: 'openai', model: 'fake-1', tools: ['echo'] },
    });
    expect(fold(waiting).waits).toMatchObject([{ kind: 'signal', signal: 'reply', callId: 'call-1' }]);

    await env.setup.js.publish(
      SUBJECTS.signal,
      JSON.stringify({
        v: SIGNAL_VERSION,
        runId: 'agent-a1',
        signalId: 's1',
        name: 'reply',
        payload: { ok: true },
      }),
      { msgID: 'signal:agent-a1:s1' },
    );
    const log = await untilLast('agent-a1', 'run_completed');
    expect(typesOf(log)).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
      'wait_requested',
      'signal_received',
      'thought',
      'run_completed',
    ]);
    const state = fold(log);
    expect(state.output).toBe('The user said yes.');
    const thoughts = log.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
    expect(thoughts[0]!.prompt!.prefix).toBeNull();
    expect(thoughts[1]!.prompt!.prefix).toBe(thoughts[0]!.prompt!.hash);
    expect(thoughts[1]!.prompt!.messages).toEqual([
      {
        role: 'assistant',
        content: 'I will ask the user.',
        toolCalls: [{ id: 'call-1', name: 'dura.wait_for_signal', arguments: { name: 'reply' } }],
      },
      { role: 'tool', toolCallId: 'call-1', name: 'dura.wait_for_signal', content: '{"ok":true}' },
    ]);
    expect(thoughts[1]!.model).toEqual({ id: 'fake-1', promptVersion: state.pinned!.promptVersion });
    expect(thoughts[1]!.costUsd).toBeCloseTo((40 * 1 + 10 * 2) / 1e6, 12);
    // The second request carried the signal's payload back as the tool result, under the provider's name.
    const second = llm().requests.filter((r) => r.body.messages[1]?.content === 'input-a1')[1]!;
    const sent = second.body.messages as unknown[];
    expect(sent[sent.length - 1]).toMatchObject({
      role: 'tool',
      tool_call_id: 'call-1',
      content: '{"ok":true}',
    });
    // Each answer streamed to DURA_TOKENS as it came, tagged with its decision (published off the path: soon).
    const streamed = async () => {
      const texts: string[] = [];
      for (const token of await readStoredTokens(env.setup.jsm, 'agent-a1'))
        texts[token.decision] = (texts[token.decision] ?? '') + token.delta;
      return texts;
    };
    await retryUntil(async () =>
      expect(await streamed()).toEqual(['I will ask the user.', 'The user said yes.']),
    );
  });

  it('fails the run before calling the model when the worst case would pass the token budget', async () => {
    replies.set('input-b1', () => ({ kind: 'message', content: 'too expensive' }));
    await submit('agent-b1', 'frugal', 'input-b1');
    const log = await untilLast('agent-b1', 'run_failed');
    expect(typesOf(log)).toEqual(['run_requested', 'run_started', 'budget_exceeded', 'run_failed']);
    expect(log[2]!.data).toMatchObject({ budget: 'tokens', limit: 100, policy: 'fail' });
    expect(llm().requests.filter((r) => r.body.messages[1]?.content === 'input-b1')).toHaveLength(0);
  });

  it('fails the run with the provider’s reason when the provider refuses the request (HTTP 400)', async () => {
    replies.set('input-d1', () => ({
      kind: 'status',
      status: 400,
      body: { error: { message: 'model fake-1 does not support tools', type: 'invalid_request_error' } },
    }));
    await submit('agent-d1', 'helper', 'input-d1');
    const log = await untilLast('agent-d1', 'run_failed');
    expect(typesOf(log)).toEqual(['run_requested', 'run_started', 'run_failed']);
    expect(log.at(-1)!.data).toMatchObject({
      error: { code: 'model_request_rejected', message: expect.stringContaining('does not support tools') },
    });
    // Refused at once: a 400 is not retried.
    expect(llm().requests.filter((r) => r.body.messages[1]?.content === 'input-d1')).toHaveLength(1);
  });

  it('fails the run with the reason when the model answers more than the run log may hold', async () => {
    // Content over the string limit: the thought could never be read back, so it is never appended.
    replies.set('input-l1', () => ({ kind: 'message', content: 'w'.repeat(600 * 1024) }));
    await submit('agent-l1', 'helper', 'input-l1');
    const log = await untilLast('agent-l1', 'run_failed');
    expect(typesOf(log)).toEqual(['run_requested', 'run_started', 'run_failed']);
    expect(log.at(-1)!.data).toMatchObject({
      error: { code: 'event_over_limits', message: expect.stringContaining('over the limit of') },
    });
  });

  it('treats tool-call arguments nested deeper than the limits as a malformed answer, never recorded', async () => {
    const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    // Sent verbatim: the arguments are JSON text as a provider streams them.
    replies.set('input-l2', () => ({ kind: 'message', toolCalls: [{ name: 'echo', arguments: deep }] }));
    await submit('agent-l2', 'helper', 'input-l2');
    const log = await untilLast('agent-l2', 'run_failed');
    expect(typesOf(log)).toEqual(['run_requested', 'run_started', 'run_failed']);
    expect(JSON.stringify(log.at(-1)!.data)).toContain('over the message limits');
  });

  it('rejects a request for an agent this planner does not serve, naming the ones it does', async () => {
    await submit('agent-c1', 'nobody', 'x');
    const log = await untilLast('agent-c1', 'run_rejected');
    expect(log.at(-1)!.data).toMatchObject({
      error: { code: 'unknown_agent', message: expect.stringContaining('known agents: frugal, helper') },
    });
  });
});
