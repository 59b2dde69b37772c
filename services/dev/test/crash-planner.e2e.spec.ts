// DESIGN crash points 1 and 2: the planner process is SIGKILLed at a failpoint in the middle of a 5-step run
// (step 3), restarted without it, and the run must finish as if nothing happened.
import { describe, expect, it } from 'vitest';
import { expectRecovered, keyOf, logOf, useCrashSystem } from './crash-harness';
import { killerOf } from './crash-points-support';

const crash = useCrashSystem(['tool-gateway', 'projector']);

const killAt = killerOf('planner');

describe('a planner killed with SIGKILL', () => {
  it('after the model answered, before the thought is appended: asks for that one decision again, and only that', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-planner-after-model', 'planner.after-model:3');

    // The third answer (decision number 2, asking for step 3) was given but never recorded.
    const log = await logOf(sys, request.runId);
    expect(log.filter((e) => e.type === 'thought')).toHaveLength(2);
    expect((await sys.modelCalls(request.runId)).map((c) => c.decisions)).toEqual([0, 1, 2]);
    expect(sys.witness.requests(keyOf(request, 3))).toBe(0);

    await sys.restart('planner');
    await expectRecovered(sys, request.runId, { steps: 5, repeatedDecision: 2 });
  });

  it('after the intent is appended, before the tool task is dispatched: dispatches it without asking the model', async () => {
    const sys = crash();
    const request = await killAt(sys, 'crash-planner-after-intent', 'planner.after-intent:3');

    // Step 3 is journaled (thought + intent) but its task never left the planner.
    const log = await logOf(sys, request.runId);
    const last = log.at(-1);
    expect(last?.type).toBe('tool_call_requested');
    if (last?.type === 'tool_call_requested') expect(last.data.idempotencyKey).toBe(keyOf(request, 3));
    expect(sys.witness.requests(keyOf(request, 3))).toBe(0);

    await sys.restart('planner');
    await expectRecovered(sys, request.runId, { steps: 5 });
  });
});
