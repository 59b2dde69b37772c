// Version pinning across a crash and a rolling deploy (issue 7, acceptance 2: one fault test per capability).
//
// A run is pinned at `run_started` to the agent version, prompt version, model and tools it started on, and
// only a planner serving exactly that pin may decide it. Here planner A serves `helper@1` and planner B
// serves `helper@2` (another system prompt, so another prompt version). A run starts on A, asks for a slow
// charge, and A is SIGKILLed while the charge runs. B, alone, must not decide the run: it parks it (KV bucket
// dura_parked_runs) for a planner that serves the pin, which picks it up as soon as it runs; B never asks
// the model with its own prompt. When A is back, the run completes under version 1 only. Meanwhile a run submitted without a
// version while only B runs is pinned to B's newest version, 2.
//
// Upgrade path: a planner serves several versions at once when its agents file lists them all (here
// `helper@1` and `helper@2` side by side). Roll out such planners first; new runs then get the newest
// version (or the one they name), while runs pinned to the old one keep being decided by any of them. Drop
// the old version from the file only once no live run is pinned to it; until then, a planner without it
// leaves those runs alone rather than deciding them with another prompt.
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { logOf, useCrashSystem, watchToEnd, untilLogged } from './crash-harness';
import {
  AGENT_TOOLS_ENV,
  fakeModel,
  requestsPerDecision,
  systemOf,
  toolResults,
  useScriptedLlm,
  writeAgentsFile,
  type WireBody,
} from './scripted-llm';
import { dura, eventually, sleep } from './system';

const PROMPT_1 = 'You are the payments helper, version one. Charge what you are asked to.';
const PROMPT_2 = 'You are the payments helper, version two. Charge exactly what you are asked to.';

const fake = useScriptedLlm();
const crash = useCrashSystem(['tool-gateway', 'projector'], { env: () => AGENT_TOOLS_ENV });

function agentsFile(version: string, systemPrompt: string, url: string) {
  return {
    agents: [{ name: 'helper', version, systemPrompt, model: fakeModel(url), tools: ['pay.charge'] }],
  };
}

/** One charge (`delayMs` holds the witness's answer back), then the final answer. */
function chargeOnce(amount: number, delayMs: number) {
  return (body: WireBody) =>
    toolResults(body).length === 0
      ? {
          kind: 'message' as const,
          content: `Charging ${amount}.`,
          toolCalls: [{ name: 'pay__charge', arguments: { amount, delayMs } }],
        }
      : { kind: 'message' as const, content: `Charged ${amount}.` };
}

function thoughtsOf(log: readonly RunEvent[]) {
  return log.flatMap((e) => (e.type === 'thought' ? [e.data] : []));
}

describe('a run pinned to an agent version', () => {
  it('is decided only by planners serving its pin, across a SIGKILL and a planner of another version', async () => {
    const sys = crash();
    const llm = fake.llm();
    const fileA = await writeAgentsFile(fake.dir(), 'agents-v1', agentsFile('1', PROMPT_1, llm.url));
    const fileB = await writeAgentsFile(fake.dir(), 'agents-v2', agentsFile('2', PROMPT_2, llm.url));
    const old = { runId: 'pin-old', input: 'Charge 100 for order pin-old.' };
    const fresh = { runId: 'pin-new', input: 'Charge 200 for order pin-new.' };
    llm.script(old.input, chargeOnce(100, 2_500));
    llm.script(fresh.input, chargeOnce(200, 0));

    // Only planner A (helper@1) runs: the run is pinned to version 1.
    await sys.restart('planner', undefined, { DURA_AGENTS: fileA });
    await sys.submit({ runId: old.runId, agent: { kind: 'agent', name: 'helper' }, input: old.input });
    const requested = await untilLogged(
      sys,
      old.runId,
      (e) => e.type === 'tool_call_requested',
      'the charge is requested',
    );
    const started = requested.find((e) => e.type === 'run_started');
    const pinned = started?.type === 'run_started' ? started.data.pinned : undefined;
    expect(pinned).toMatchObject({ agent: 'helper', version: '1', model: 'fake-1', tools: ['pay.charge'] });
    const key = fold(requested).calls[0]!.idempotencyKey;

    // The charge is under way (the witness holds its answer back 2.5 s): A dies mid-run.
    await eventually(
      () => Promise.resolve(sys.witness.requests(key) > 0 ? true : undefined),
      'the charge to start',
    );
    await sys.proc('planner').kill('SIGKILL');
    expect((await sys.proc('planner').exited).signal).toBe('SIGKILL');

    // Only planner B (helper@2) runs. The charge's result reaches the log and B gets the decide task...
    const plannerB = await sys.startExtra('planner', { DURA_AGENTS: fileB });
    await untilLogged(sys, old.runId, (e) => e.type === 'tool_call_completed', 'the charge is observed');
    // ...and parks it for a planner that serves the pin, which picks it up when it comes back.
    await plannerB.waitForOutput(/run parked for a planner that serves its pinned version.*helper@1/, 20_000);
    const stalled = await logOf(sys, old.runId);
    await sleep(3_000);
    expect((await logOf(sys, old.runId)).map((e) => e.type)).toEqual(stalled.map((e) => e.type));
    expect(stalled.at(-1)?.type).toBe('tool_call_completed');
    expect(llm.requestsFor(old.input).map(systemOf)).toEqual([PROMPT_1]);
    // `dura get` says why a run that shows `running` makes no progress, and what brings it back.
    const parked = await dura(sys, ['get', old.runId]);
    expect(parked.output).toMatch(/^status +running$/m);
    expect(parked.output).toMatch(
      /^parked: no running planner serves helper@1, the version this run is pinned to; start a planner whose agents \(DURA_AGENTS\) include it/m,
    );

    // A run submitted without a version while only B runs is pinned to version 2, and B completes it.
    await sys.submit({ runId: fresh.runId, agent: { kind: 'agent', name: 'helper' }, input: fresh.input });
    const freshLog = await watchToEnd(sys, fresh.runId, 30_000);
    expect(freshLog.at(-1)?.type).toBe('run_completed');
    const freshPin = fold(freshLog).pinned;
    expect(freshPin).toMatchObject({ agent: 'helper', version: '2' });
    expect(freshPin?.promptVersion).not.toBe(pinned?.promptVersion);
    expect(thoughtsOf(freshLog).map((t) => t.model.promptVersion)).toEqual([
      freshPin?.promptVersion,
      freshPin?.promptVersion,
    ]);
    expect(llm.requestsFor(fresh.input).map(systemOf)).toEqual([PROMPT_2, PROMPT_2]);

    // A is back (B still runs beside it): the old run completes under version 1 only.
    await sys.restart('planner', undefined, { DURA_AGENTS: fileA });
    const oldLog = await watchToEnd(sys, old.runId, 45_000);
    expect(oldLog.at(-1)?.type).toBe('run_completed');
    const state = fold(oldLog);
    expect(state.output).toBe('Charged 100.');
    expect(state.pinned).toEqual(pinned);
    const thoughts = thoughtsOf(oldLog);
    expect(thoughts).toHaveLength(2);
    for (const thought of thoughts) expect(thought.model.promptVersion).toBe(pinned?.promptVersion);
    const asked = llm.requestsFor(old.input);
    expect(asked.map(systemOf)).toEqual([PROMPT_1, PROMPT_1]);
    expect(requestsPerDecision(asked), 'each decision asked once').toEqual({ start: 1, 'call-1': 1 });

    const done = await dura(sys, ['get', old.runId]);
    expect(done.output).toMatch(/^status +completed$/m);
    expect(done.output).not.toMatch(/parked/);

    // Each charge took effect exactly once.
    for (const log of [oldLog, freshLog])
      for (const call of fold(log).calls) expect(sys.witness.effects(call.idempotencyKey)).toBe(1);
  });
});
