// Human approval and named signals across a crash (issue 7, acceptance 2: one fault test per capability).
//
// A call to a tool the agent's `approvals` name is recorded, then the run waits (`wait_requested`, kind
// approval) and nothing runs until a human answers with the signal `approve` or `reject`. A waiting run holds
// no process (DESIGN invariant 8), so the worst moment to die is while it waits: the planner is SIGKILLed
// and a fresh one must find the wait in the log alone. `approve` runs the call once; `reject` never runs it
// and the model reads the rejection as the call's error. A scripted plan's `dura.wait_for_signal` likewise
// survives a kill, and the signal's payload becomes the call's result for later `$steps` references.
import { describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import type { JsonValue } from '@dura/contracts';
import { fold } from '@dura/core';
import { expectKilledAt, logOf, useCrashSystem, watchToEnd } from './crash-harness';
import {
  count,
  fakeModel,
  killNow,
  ledgerOf,
  plannerCaughtUp,
  toolMessages,
  typesOf,
  untilLogged,
  useAgentModel,
  witnessedKeys,
  type WireBody,
} from './agent-support';

const model = useAgentModel((url) => ({
  agents: [
    {
      name: 'cashier',
      version: '1',
      systemPrompt: 'You charge customers; a human approves every charge.',
      model: fakeModel(url),
      tools: ['pay.charge'],
      approvals: { tools: ['pay.charge'] },
    },
  ],
}));
const crash = useCrashSystem(['planner', 'tool-gateway'], {
  env: (name): Record<string, string> => (name === 'planner' ? { DURA_AGENTS: model().agentsPath } : {}),
});

/** Asks for one charge of `amount`; once its result (or error) is in, answers with what it read. */
function chargeOnce(amount: number) {
  return (body: WireBody) => {
    const result = toolMessages(body)[0];
    if (!result)
      return {
        kind: 'message' as const,
        content: `Charging ${amount}.`,
        toolCalls: [{ name: 'pay__charge', arguments: { amount } }],
      };
    return { kind: 'message' as const, content: `Outcome: ${result.content ?? ''}` };
  };
}

const isApprovalWait = (e: { type: string; data: unknown }) =>
  e.type === 'wait_requested' && (e.data as { kind: string }).kind === 'approval';

describe('an agent whose charges need a human approval', () => {
  it('with the planner killed while it waits: nothing runs until approve, then the charge runs once and the run completes', async () => {
    const sys = crash();
    const llm = model();
    const client = createDuraClient(sys.system);
    const runId = 'approval-approved';
    const input = 'Charge the customer 500.';
    llm.script(input, chargeOnce(500));
    await sys.submit({ runId, agent: { kind: 'agent', name: 'cashier' }, input });

    const waiting = await untilLogged(sys, runId, isApprovalWait, 'the approval wait');
    await killNow(sys, 'planner');
    expect(typesOf(await logOf(sys, runId))).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
      'wait_requested',
    ]);
    expect(waiting.at(-1)?.data).toEqual({
      waitId: 'approval:call-1',
      kind: 'approval',
      callId: 'call-1',
      signal: 'approve',
      onTimeout: 'reject',
    });
    const parked = fold(waiting);
    expect(parked.status).toBe('waiting');
    expect(parked.calls[0]).toMatchObject({ status: 'pending', approval: { onTimeout: 'reject' } });
    expect(witnessedKeys(sys, runId), 'nothing is charged before the approval').toEqual([]);
    expect(await ledgerOf(sys, runId), 'nothing was handed to the gateway').toEqual([]);

    await sys.restart('planner');
    await plannerCaughtUp(sys);
    expect(witnessedKeys(sys, runId)).toEqual([]);
    await client.signal(runId, 'approve', {
      signalId: 'approve-1',
      payload: { callId: 'call-1', approved: true },
    });
    const log = await watchToEnd(sys, runId, 30_000);
    expect(typesOf(log)).toEqual([
      'run_requested',
      'run_started',
      'thought',
      'tool_call_requested',
      'wait_requested',
      'signal_received',
      'tool_call_completed',
      'thought',
      'run_completed',
    ]);
    const state = fold(log);
    const call = state.calls[0];
    expect(call?.approval?.decision).toBe('approved');
    expect(sys.witness.effects(call?.idempotencyKey ?? '')).toBe(1);
    expect(witnessedKeys(sys, runId)).toEqual([call?.idempotencyKey]);
    expect(state.output).toBe(`Outcome: ${JSON.stringify(call?.result)}`);
    // Asked once per decision: the wait and the kill did not make the planner ask for the charge again.
    expect(llm.requestsFor(input)).toHaveLength(2);
  });

  it('killed right after the wait is recorded, then rejected: never charges, and the model reads the rejection', async () => {
    const sys = crash();
    const llm = model();
    const runId = 'approval-rejected';
    const input = 'Charge the customer 900.';
    llm.script(input, chargeOnce(900));
    await sys.restart('planner', 'planner.after-wait:1');
    await sys.submit({ runId, agent: { kind: 'agent', name: 'cashier' }, input });
    await expectKilledAt(sys, 'planner', 'planner.after-wait:1');
    expect((await logOf(sys, runId)).filter(isApprovalWait)).toHaveLength(1);

    await sys.restart('planner');
    // The restarted planner re-drives the run the killed one held: it finds the wait and starts nothing.
    await plannerCaughtUp(sys);
    expect(typesOf(await logOf(sys, runId)).at(-1)).toBe('wait_requested');
    await createDuraClient(sys.system).signal(runId, 'reject', {
      signalId: 'reject-1',
      payload: { reason: 'the amount is over the limit' },
    });
    const log = await watchToEnd(sys, runId, 30_000);
    expect(log.at(-1)?.type, typesOf(log).join(', ')).toBe('run_completed');
    const state = fold(log);
    const call = state.calls[0];
    const rejection =
      'pay.charge (step 1) was not approved: a human rejected it: the amount is over the limit';
    expect(call).toMatchObject({
      status: 'failed',
      approval: { decision: 'rejected' },
      error: { code: 'rejected', message: rejection },
    });
    expect(count(log, 'tool_call_completed') + count(log, 'tool_call_failed')).toBe(0);

    // The model's next request carries the rejection as the call's error; nothing reached the gateway.
    const requests = llm.requestsFor(input);
    expect(requests).toHaveLength(2);
    const results = toolMessages(requests[1] as WireBody);
    expect(results).toEqual([
      { role: 'tool', tool_call_id: 'call-1', content: `Error: error rejected: ${rejection}` },
    ]);
    expect(state.output).toBe(`Outcome: Error: error rejected: ${rejection}`);
    expect(sys.witness.requests(call?.idempotencyKey ?? '')).toBe(0);
    expect(await ledgerOf(sys, runId)).toEqual([]);
  });

  it('an approve carrying anything but {"approved": true} is a refusal naming it: never charges', async () => {
    const sys = crash();
    const llm = model();
    const client = createDuraClient(sys.system);
    const answers: [string, JsonValue | undefined][] = [
      ['callid', { callId: 'call-1' }],
      ['empty', {}],
      ['null', null],
      ['yes', 'yes'],
      ['string', { approved: 'true' }],
    ];
    const runIds = answers.map(([name]) => `approval-answer-${name}`);
    for (const [i, runId] of runIds.entries()) {
      llm.script(`Charge ${runId}.`, chargeOnce(100 + i));
      await sys.submit({ runId, agent: { kind: 'agent', name: 'cashier' }, input: `Charge ${runId}.` });
    }
    for (const runId of runIds)
      await untilLogged(sys, runId, isApprovalWait, `the approval wait of ${runId}`);
    for (const [i, [, payload]] of answers.entries())
      await client.signal(runIds[i]!, 'approve', {
        signalId: `approve-${i}`,
        ...(payload === undefined ? {} : { payload }),
      });
    for (const [i, [, payload]] of answers.entries()) {
      const runId = runIds[i]!;
      const log = await watchToEnd(sys, runId, 30_000);
      const call = fold(log).calls[0];
      expect(call).toMatchObject({
        status: 'failed',
        approval: { decision: 'rejected' },
        error: {
          code: 'rejected',
          message: `pay.charge (step 1) was not approved: approval signal 'approve' carried ${JSON.stringify(payload)} — only {"approved": true} approves`,
        },
      });
      expect(sys.witness.requests(call?.idempotencyKey ?? '')).toBe(0);
      expect(await ledgerOf(sys, runId)).toEqual([]);
    }
  });
});

describe('a scripted plan waiting for a named signal', () => {
  it('with the planner killed while it waits: the signal payload is the call result a later step references', async () => {
    const sys = crash();
    const runId = 'signal-payload';
    await sys.submit({
      runId,
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'dura.wait_for_signal', args: { name: 'invoice_ready' } },
          { tool: 'pay.charge', args: { amount: '$steps.1.amount' } },
        ],
        output: { charge: '$steps.2.chargeId', approvedBy: '$steps.1.by' },
      },
    });
    const waiting = await untilLogged(
      sys,
      runId,
      (e) => e.type === 'wait_requested' && e.data.kind === 'signal',
      'the signal wait',
    );
    await killNow(sys, 'planner');
    expect(waiting.at(-1)?.data).toEqual({
      waitId: 'signal:call-1',
      kind: 'signal',
      callId: 'call-1',
      signal: 'invoice_ready',
    });
    expect(await logOf(sys, runId)).toEqual(waiting);

    await sys.restart('planner');
    await plannerCaughtUp(sys);
    expect(await logOf(sys, runId)).toEqual(waiting);
    const payload = { amount: 700, by: 'finance' };
    await createDuraClient(sys.system).signal(runId, 'invoice_ready', { signalId: 'ready-1', payload });
    const log = await watchToEnd(sys, runId, 30_000);
    expect(log.at(-1)?.type, typesOf(log).join(', ')).toBe('run_completed');
    const state = fold(log);
    const [wait, charge] = state.calls;
    expect(wait).toMatchObject({ tool: 'dura.wait_for_signal', status: 'completed', result: payload });
    expect(charge).toMatchObject({ tool: 'pay.charge', args: { amount: 700 }, status: 'completed' });
    expect(sys.witness.effects(charge?.idempotencyKey ?? '')).toBe(1);
    expect(witnessedKeys(sys, runId)).toEqual([charge?.idempotencyKey]);
    expect(state.output).toEqual({
      charge: (charge?.result as { chargeId: string }).chargeId,
      approvedBy: 'finance',
    });
    // Each of the three decisions (wait, charge, finish) asked once, the kill notwithstanding.
    expect((await sys.modelCalls(runId)).map((c) => c.decisions)).toEqual([0, 1, 2]);
  });
});
