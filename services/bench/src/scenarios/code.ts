// J: what a code agent costs the planner per step. A `steps`-step agent (one tool call a step) is decided
// through the planner's own step (`plannerStep` with `withCodeAgents`), its continuation kept between steps;
// then the decision after the last step is taken cold (a fresh cache: the code replays the whole log). The
// same run is then driven by the real run driver over a real nats-server, whose last step is a cold resume.
import type { AnyCodeAgent } from '@dura/code-agents';
import { newEvent, type RunEvent, type RunRequest } from '@dura/contracts';
import { evolve, fold, initialRunState, nextAction, type EventDraft, type RunState } from '@dura/core';
import type { EventStore } from '@dura/event-store';
import { createCodeContinuations, createScriptedModel, plannerStep, withCodeAgents } from '@dura/agents';
import { countReporter, progress } from '../progress';
import { BENCH_CODE_AGENT, benchCodeAgent } from './code-agent';
import { codeAgentOnServices } from './code-services';
import { benchMeta as meta, openDriverStack } from './driver-stack';
import type { BenchScenarios } from '../schema';
import { distribution, round } from '../stats';

/** Uncached decisions cost O(step): sampling every 10th keeps the scenario quick, the mean unbiased. */
const UNCACHED_EVERY = 10;

function plannerModel(agent: AnyCodeAgent, kept = 1000) {
  const continuations = createCodeContinuations({ max: kept });
  return {
    continuations,
    model: withCodeAgents({ agents: [agent], base: createScriptedModel(), continuations }),
  };
}

function request(runId: string, steps: number): RunRequest & { runId: string } {
  return { v: 1, runId, agent: { kind: 'agent', name: BENCH_CODE_AGENT }, input: { steps } };
}

function completion(call: { callId: string; idempotencyKey: string; args: unknown }) {
  return {
    callId: call.callId,
    idempotencyKey: call.idempotencyKey,
    result: call.args as never,
    attempt: 1,
    deduped: false,
    durationMs: 0,
  };
}

interface InProcess {
  stepMs: number[];
  /** Every UNCACHED_EVERY-th decision again with nothing kept. */
  uncachedMs: number[];
  /** The log and its state where the decision after the last step is due. */
  atEnd: { events: RunEvent[]; state: RunState };
  stats: { warm: number; cold: number };
}

/** The run decided step by step as the planner does, each tool answered at once; every decision timed. */
async function decideInProcess(agent: AnyCodeAgent, steps: number): Promise<InProcess> {
  const { model, continuations } = plannerModel(agent);
  const runId = 'code-in-process';
  const events: RunEvent[] = [];
  let state = initialRunState();
  const add = (draft: EventDraft) => {
    const event: RunEvent = {
      ...newEvent(draft.type, draft.data as never, meta(runId)),
      seq: events.length + 1,
    };
    events.push(event);
    state = evolve(state, event);
  };
  add({ type: 'run_requested', data: { request: request(runId, steps) } });
  const stepMs: number[] = [];
  const uncachedMs: number[] = [];
  const report = countReporter('J: in-process steps decided', steps + 1, 100);
  let atEnd: InProcess['atEnd'] | undefined;
  for (;;) {
    const action = nextAction(state);
    if (action.kind === 'idle') break;
    if (action.kind === 'dispatch') {
      for (const call of action.calls) add({ type: 'tool_call_completed', data: completion(call) });
      continue;
    }
    if (action.kind === 'decide' && state.turns.length === steps) atEnd = { events: [...events], state };
    if (action.kind === 'decide' && stepMs.length % UNCACHED_EVERY === 0) {
      // The same decision with nothing kept, as every step would cost without the cache (result unused).
      const began = performance.now();
      await plannerStep(state, action, { model: plannerModel(agent, 0).model, now: new Date() });
      uncachedMs.push(performance.now() - began);
    }
    const began = performance.now();
    const step = await plannerStep(state, action, { model, now: new Date() });
    if (action.kind === 'decide') {
      stepMs.push(performance.now() - began);
      report(stepMs.length);
    }
    if (step.kind !== 'none') step.drafts.forEach(add);
  }
  if (state.status !== 'completed' || !atEnd)
    throw new Error(
      `the bench's code agent ended ${state.status}: ${JSON.stringify(state.error ?? state.waiting)}`,
    );
  return { stepMs, uncachedMs, atEnd, stats: { ...continuations.stats } };
}

/** The decision after the last step with nothing kept: from the folded state, and from the events. */
async function coldResumes(agent: AnyCodeAgent, atEnd: InProcess['atEnd'], repeats: number) {
  const replay: number[] = [];
  const withFold: number[] = [];
  for (let r = 0; r < repeats; r += 1) {
    for (const fromEvents of [false, true]) {
      const { model } = plannerModel(agent);
      const began = performance.now();
      const state = fromEvents ? fold(atEnd.events) : atEnd.state;
      const step = await plannerStep(state, nextAction(state), { model, now: new Date() });
      (fromEvents ? withFold : replay).push(performance.now() - began);
      if (step.kind !== 'thought' || step.turn.decision.kind !== 'complete')
        throw new Error(`a cold resume decided ${step.kind}, not the run's completion`);
    }
  }
  return { replay, withFold };
}

async function completeOpenCall(store: EventStore, runId: string, state: RunState): Promise<void> {
  const call = state.calls.find((c) => c.status === 'pending');
  if (!call) throw new Error(`run ${runId} has no open call after step ${state.turns.length}`);
  const event = newEvent('tool_call_completed', completion(call), {
    ...meta(runId),
    id: `${call.idempotencyKey}:result`,
  });
  await store.append(runId, [event], { expectedSeq: 'any' });
}

/** The run driven by the planner's run driver over a real nats-server; its last decision by a fresh driver. */
async function driveOnStack(agent: AnyCodeAgent, steps: number) {
  await using stack = await openDriverStack('dura-bench-code');
  const driverOf = () => stack.driverOf(plannerModel(agent).model);
  const runId = 'code-on-stack';
  await stack.request(request(runId, steps));
  const driver = driverOf();
  const driveMs: number[] = [];
  const report = countReporter('J: steps driven by the run driver', steps, 100);
  for (let step = 1; step <= steps; step += 1) {
    const began = performance.now();
    const outcome = await driver.drive(runId);
    driveMs.push(performance.now() - began);
    report(step);
    await completeOpenCall(stack.store, runId, outcome.state);
  }
  await driver.flushSnapshots();
  const began = performance.now();
  const last = await driverOf().drive(runId);
  const coldResumeDriveMs = performance.now() - began;
  if (last.state.status !== 'completed') throw new Error(`the driven run ended ${last.state.status}`);
  return { driveMs, coldResumeDriveMs, events: last.state.eventCount };
}

export async function codeAgentCost(sizes: {
  codeSteps: number;
  codeColdRepeats: number;
}): Promise<NonNullable<BenchScenarios['code']>> {
  const agent: AnyCodeAgent = benchCodeAgent;
  const inProcess = await decideInProcess(agent, sizes.codeSteps);
  progress(`J: ${sizes.codeColdRepeats} cold resumes of the ${sizes.codeSteps}-step run`);
  const cold = await coldResumes(agent, inProcess.atEnd, sizes.codeColdRepeats);
  const stack = await driveOnStack(agent, sizes.codeSteps);
  const services = await codeAgentOnServices(sizes.codeSteps);
  return {
    mode: 'in-process',
    note:
      'cachedStepMs: plannerStep of each decision through withCodeAgents with the run kept in its continuation ' +
      'cache (advance + the thought), log in memory; uncachedStepMs: every 10th of those decisions again with ' +
      'nothing kept (the code replays from the start); coldResumeMs: the decision after the last step with an ' +
      'empty cache (the code replays every step), from the folded state or folding the events first; driver: ' +
      'the run driver over a real nats-server (read the tail, decide, append thought and intent, dispatch), ' +
      'its last step by a fresh driver (snapshot + tail, cold replay); services: one run through planner and ' +
      'gateway processes, step cycle from the stream store times',
    steps: sizes.codeSteps,
    continuations: inProcess.stats,
    cachedStepMs: distribution(inProcess.stepMs),
    uncachedStepMs: distribution(inProcess.uncachedMs),
    coldResumeMs: distribution(cold.replay),
    coldResumeWithFoldMs: distribution(cold.withFold),
    driver: {
      events: stack.events,
      stepDriveMs: distribution(stack.driveMs),
      coldResumeDriveMs: round(stack.coldResumeDriveMs),
    },
    services,
  };
}
