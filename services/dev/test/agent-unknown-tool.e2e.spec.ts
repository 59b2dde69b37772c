// A model naming tools it may not call (issue 9, validation everywhere): a tool nobody has, a tool this
// deployment has but the agent was not given, and a tool it was given with arguments its schema refuses.
// None of them may reach an external system; each must come back to the model as a failure it can read and
// that is not retried, and the run goes on. The planner refuses a tool outside the agent's list before
// dispatch (tool_not_allowed); the gateway refuses arguments its schema does not accept before the effect.
import { describe, expect, it } from 'vitest';
import { useCrashSystem, watchToEnd } from './crash-harness';
import {
  fakeModel,
  ledgerOf,
  toolMessages,
  useAgentModel,
  witnessedKeys,
  type WireBody,
} from './agent-support';

const model = useAgentModel((url) => ({
  agents: [
    {
      name: 'clerk',
      version: '1',
      systemPrompt: 'You charge small amounts, nothing else.',
      model: fakeModel(url),
      tools: ['pay.charge'],
    },
  ],
}));
const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => (name === 'planner' ? { DURA_AGENTS: model().agentsPath } : {}),
});

function reachForEverything(body: WireBody) {
  if (toolMessages(body).length === 0)
    return {
      kind: 'message' as const,
      content: 'Trying every tool I can think of.',
      toolCalls: [
        { name: 'deploy__rocket', arguments: { to: 'mars' } },
        // Registered with the gateway (the witness tools), but not one of this agent's tools.
        { name: 'pay__unsafe', arguments: { amount: 999 } },
        { name: 'pay__charge', arguments: { amount: -5 } },
      ],
    };
  return { kind: 'message' as const, content: 'None of that worked; stopping.' };
}

describe('a model calling tools it may not use', () => {
  it('gets a non-retryable failure for each, no effect happens, and the run goes on', async () => {
    const sys = crash();
    const llm = model();
    const runId = 'agent-unknown-tools';
    const input = 'Launch a rocket and charge 999 through the unsafe path.';
    llm.script(input, reachForEverything);
    await sys.submit({ runId, agent: { kind: 'agent', name: 'clerk' }, input });

    const log = await watchToEnd(sys, runId);
    expect(log.at(-1)?.type).toBe('run_completed');
    const requested = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
    // The decision is recorded as the model made it: the log shows what it asked for.
    expect(requested.map((call) => [call.tool, call.args])).toEqual([
      ['deploy.rocket', { to: 'mars' }],
      ['pay.unsafe', { amount: 999 }],
      ['pay.charge', { amount: -5 }],
    ]);
    const failed = log.flatMap((e) => (e.type === 'tool_call_failed' ? [e.data] : []));
    expect(failed.map((f) => [f.callId, f.error.code, f.retryable])).toEqual([
      [requested[0]?.callId, 'tool_not_allowed', false],
      [requested[1]?.callId, 'tool_not_allowed', false],
      [requested[2]?.callId, 'invalid_args', false],
    ]);

    expect(witnessedKeys(sys, runId), 'nothing reached the payment provider').toEqual([]);
    // Only the call the agent may make reached the gateway, which refused its arguments before running it.
    expect((await ledgerOf(sys, runId)).map((row) => [row.tool, row.status])).toEqual([
      ['pay.charge', 'failed'],
    ]);

    const asked = llm.requestsFor(input);
    expect(asked).toHaveLength(2);
    const seen = toolMessages(asked[1] as WireBody).map((m) => m.content ?? '');
    expect(seen).toHaveLength(3);
    // The adapter prefixes a failed call's text with "Error: ".
    expect(seen[0]).toMatch(
      /error tool_not_allowed: agent clerk@1 may not call deploy\.rocket; its tools are: pay\.charge$/,
    );
    expect(seen[1]).toMatch(
      /error tool_not_allowed: agent clerk@1 may not call pay\.unsafe; its tools are: pay\.charge$/,
    );
    expect(seen[2]).toMatch(/error invalid_args: invalid arguments for pay\.charge: amount:/);
  });
});
