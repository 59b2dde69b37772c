// Parallel tool calls across a crash (issue 7, acceptance 2: one fault test per capability).
//
// A model may ask for several tool calls in one answer. The planner records that one decision, then all of
// its intents, and dispatches them together; the next decision waits until every one of them has a result,
// failures included. The worst moment to die is while the calls run side by side: the gateway is SIGKILLed
// with both charges taken by the payment provider and neither answered. The gateway that comes back must
// settle both by their keys (no second charge), the non-retryable failure must stay a failure the model
// reads, and the model must be asked exactly twice: once for the three calls, once with all three results.
import { describe, expect, it } from 'vitest';
import { fold } from '@dura/core';
import { logOf, useCrashSystem, watchToEnd } from './crash-harness';
import {
  count,
  fakeModel,
  killNow,
  ledgerOf,
  toolMessages,
  typesOf,
  useAgentModel,
  witnessedKeys,
  type WireBody,
} from './agent-support';
import { eventually } from './system';

// Long enough to kill the gateway while the witness holds both answers back, short enough to stay inside the
// witness tools' 3 s timeout.
const CHARGE_DELAY_MS = 2_000;
const MODEL_LATENCY_MS = 1_000;
const DECLINED = 'card declined by the issuer';

const model = useAgentModel((url) => ({
  agents: [
    {
      name: 'payer',
      version: '1',
      systemPrompt: 'You pay the invoices you are given, all at once.',
      model: fakeModel(url),
      tools: ['pay.charge', 'demo.fail'],
    },
  ],
}));
const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => (name === 'planner' ? { DURA_AGENTS: model().agentsPath } : {}),
});

/** First answer: three calls at once; once results are in: the final answer. */
function payAll(body: WireBody) {
  if (toolMessages(body).length === 0)
    return {
      kind: 'message' as const,
      content: 'Paying all three invoices at once.',
      toolCalls: [
        { name: 'pay__charge', arguments: { amount: 100, delayMs: CHARGE_DELAY_MS } },
        { name: 'pay__charge', arguments: { amount: 200, delayMs: CHARGE_DELAY_MS } },
        { name: 'demo__fail', arguments: { message: DECLINED } },
      ],
    };
  // A real model takes a while to answer; so does this one, with all three results in.
  return {
    kind: 'message' as const,
    content: 'Paid 100 and 200; the third card was declined.',
    delayMs: MODEL_LATENCY_MS,
  };
}

describe('an agent making three tool calls at once', () => {
  it('with the gateway killed while both charges run: each charges once, the failure reaches the model, two model calls', async () => {
    const sys = crash();
    const llm = model();
    const runId = 'parallel-gateway-killed';
    const input = 'Pay invoices A (100), B (200) and C (declined card).';
    llm.script(input, payAll);
    await sys.submit({ runId, agent: { kind: 'agent', name: 'payer' }, input });

    // Both charges reached the payment provider (the effect is done), and neither answer came back yet. The
    // declined card is settled first: killed mid-call, its lease (a 60 s tool timeout) would hold its re-run
    // past this test, and the moment under test is the charges in flight.
    const charging = await eventually(
      async () =>
        witnessedKeys(sys, runId).length === 2 &&
        (await ledgerOf(sys, runId)).some((row) => row.tool === 'demo.fail' && row.status === 'failed')
          ? witnessedKeys(sys, runId)
          : undefined,
      'both charges to reach the witness, and the declined card to be recorded',
    );
    await killNow(sys, 'tool-gateway');
    const atKill = await logOf(sys, runId);
    expect(count(atKill, 'tool_call_completed'), 'no charge was answered before the kill').toBe(0);
    for (const key of charging) expect(sys.witness.effects(key)).toBe(1);

    // Dispatched together: one decision, its three intents, and only then any result.
    expect(typesOf(atKill).slice(0, 6)).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
      'tool_call_requested',
      'tool_call_requested',
    ]);
    const intents = atKill.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
    expect(intents.map((c) => [c.callId, c.tool])).toEqual([
      ['call-1', 'pay.charge'],
      ['call-2', 'pay.charge'],
      ['call-3', 'demo.fail'],
    ]);
    expect(charging.sort()).toEqual(
      intents
        .slice(0, 2)
        .map((c) => c.idempotencyKey)
        .sort(),
    );

    await sys.restart('tool-gateway');
    const log = await watchToEnd(sys, runId, 40_000);
    expect(log.at(-1)?.type, typesOf(log).join(', ')).toBe('run_completed');
    expect(log).toEqual(await logOf(sys, runId));
    const state = fold(log);
    expect(state.output).toBe('Paid 100 and 200; the third card was declined.');
    expect(state.decisions).toBe(2);
    expect(count(log, 'tool_call_requested')).toBe(3);
    const firstResult = log.findIndex(
      (e) => e.type === 'tool_call_completed' || e.type === 'tool_call_failed',
    );
    expect(log.findLastIndex((e) => e.type === 'tool_call_requested')).toBeLessThan(firstResult);

    // Each charge took effect once; the restarted gateway re-ran it by its key and got the same charge back.
    const [charge1, charge2, failure] = state.calls;
    for (const call of [charge1, charge2]) {
      expect(call?.status).toBe('completed');
      expect(sys.witness.effects(call?.idempotencyKey ?? '')).toBe(1);
      expect(sys.witness.requests(call?.idempotencyKey ?? '')).toBe(2);
    }
    expect(charge1?.result).toMatchObject({ amount: 100 });
    expect(charge2?.result).toMatchObject({ amount: 200 });
    expect(failure).toMatchObject({ status: 'failed', error: { code: 'demo_failure', message: DECLINED } });
    expect(count(log, 'tool_call_failed'), 'the failure is final: no retry').toBe(1);
    expect(witnessedKeys(sys, runId)).toHaveLength(2);
    const ledger = await ledgerOf(sys, runId);
    expect(ledger.map((row) => [row.tool, row.status])).toEqual([
      ['pay.charge', 'succeeded'],
      ['pay.charge', 'succeeded'],
      ['demo.fail', 'failed'],
    ]);

    // The model was asked twice: for the three calls, then once with all three results, the failure as an error.
    const requests = llm.requestsFor(input);
    expect(requests).toHaveLength(2);
    const second = requests[1] as WireBody;
    const assistant = second.messages.find((m) => m.role === 'assistant');
    expect(assistant?.tool_calls?.map((c) => [c.id, c.function.name])).toEqual([
      ['call-1', 'pay__charge'],
      ['call-2', 'pay__charge'],
      ['call-3', 'demo__fail'],
    ]);
    const results = toolMessages(second);
    expect(results.map((m) => m.tool_call_id)).toEqual(['call-1', 'call-2', 'call-3']);
    expect(JSON.parse(results[0]?.content ?? 'null')).toEqual(charge1?.result);
    expect(JSON.parse(results[1]?.content ?? 'null')).toEqual(charge2?.result);
    expect(results[2]?.content).toBe(`Error: error demo_failure: ${DECLINED}`);
  });

  // The restarted planner gets one decide task per result (three) at once. Its drives of one run take turns
  // (run-driver.ts), so only the first asks the model; the others find the decision in the log. Before that,
  // each drive folded the same log and asked the model for the same decision.
  it('with the planner killed while the calls run: the calls finish without it, and the model is asked once for the next decision', async () => {
    const sys = crash();
    const llm = model();
    const runId = 'parallel-planner-killed';
    const input = 'Pay invoices D (100), E (200) and F (declined card).';
    llm.script(input, payAll);
    await sys.submit({ runId, agent: { kind: 'agent', name: 'payer' }, input });
    await eventually(
      () => Promise.resolve(witnessedKeys(sys, runId).length === 2 || undefined),
      'both charges to reach the witness',
    );
    await killNow(sys, 'planner');
    // The calls need no planner: the gateway finishes all three and records their results meanwhile.
    const results = await eventually(async () => {
      const log = await logOf(sys, runId);
      return count(log, 'tool_call_completed') + count(log, 'tool_call_failed') === 3 ? log : undefined;
    }, 'all three results in the log');
    expect(count(results, 'thought')).toBe(1);

    await sys.restart('planner');
    const log = await watchToEnd(sys, runId, 40_000);
    expect(log.at(-1)?.type, typesOf(log).join(', ')).toBe('run_completed');
    const state = fold(log);
    expect(state.decisions).toBe(2);
    for (const call of state.calls.slice(0, 2)) {
      expect(sys.witness.effects(call.idempotencyKey)).toBe(1);
      expect(sys.witness.requests(call.idempotencyKey), 'never re-run: its result was recorded').toBe(1);
    }
    expect(
      llm.requestsFor(input).map((body) => toolMessages(body).map((m) => m.tool_call_id)),
      'one request per decision: the first, then one with all three results',
    ).toEqual([[], ['call-1', 'call-2', 'call-3']]);
  });
});
