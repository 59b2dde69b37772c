// Two run drivers (replicas) serving a code agent with their continuations kept, racing drive() on the same
// run over a real nats-server: every step one replica's decision wins the append and the other's kept
// execution, which drew its own random numbers, must not be resumed against it. A finished run is forgotten.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunEvent } from '@dura/contracts';
import { CANCEL_SIGNAL, fold } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import {
  createCodeContinuations,
  createScriptedModel,
  loadAgents,
  withCodeAgents,
  type CodeContinuations,
  type PlannerModel,
} from '@dura/agents';
import { createRunDriver, type DriveOutcome, type RunDriver } from '../src/index';
import {
  connect,
  prepare,
  testEvent,
  testLogger,
  type Connections,
  appendRequest,
  completeOpenCall,
} from './support';
import { RANDOM_STEPS } from './fixtures/random-steps-agent';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const AGENTS = fileURLToPath(new URL('./fixtures/random-steps-agent.ts', import.meta.url));
const RACERS = 12;
const infra = useTestInfra({ database: false });
interface Replica {
  conn: Connections;
  continuations: CodeContinuations;
  driver: RunDriver;
}
const replicas: Replica[] = [];
let setup: Connections;

/** The replica's model, taking a few ms after deciding so concurrent drives of the two replicas overlap. */
function slowed(model: PlannerModel): PlannerModel {
  return {
    ...model,
    code: async (input) => {
      const turn = await model.code?.(input);
      await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 10));
      return turn;
    },
  };
}

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  const { codeAgents } = await loadAgents(AGENTS);
  for (let i = 0; i < 2; i += 1) {
    const conn = await connect(infra().nats.url, `planner-${i}`);
    const continuations = createCodeContinuations();
    const model = withCodeAgents({ agents: codeAgents, base: createScriptedModel(), continuations });
    const driver = createRunDriver({
      store: conn.store,
      js: conn.js,
      model: slowed(model),
      log: testLogger(`planner-${i}`),
      clock: () => new Date(),
    });
    replicas.push({ conn, continuations, driver });
  }
});

afterAll(async () => {
  await Promise.allSettled(replicas.map((replica) => replica.conn.close()));
  await setup?.close();
});

async function submit(runId: string): Promise<void> {
  const request = { v: 1 as const, runId, agent: { kind: 'agent' as const, name: 'random-steps' } };
  await appendRequest(setup.store, request);
}

function race(runId: string): Promise<DriveOutcome[]> {
  return Promise.all(Array.from({ length: RACERS }, (_, i) => replicas[i % 2]!.driver.drive(runId)));
}

const decisions = () =>
  replicas.reduce((n, replica) => n + replica.continuations.stats.warm + replica.continuations.stats.cold, 0);

describe('code-agent continuations on two racing replicas', () => {
  it('completes with one decision per step and the log’s own values, never a false non-determinism', async () => {
    const runId = 'code-race';
    await submit(runId);
    for (let round = 1; round <= RANDOM_STEPS; round += 1) {
      await race(runId);
      const state = fold(await setup.store.read(runId));
      expect(state.waiting?.reason).toBeUndefined();
      expect(state).toMatchObject({ status: 'running', steps: round });
      await completeOpenCall(setup.store, runId, { ok: true }, round);
    }
    await race(runId);

    const log = await setup.store.read(runId);
    const state = fold(log);
    expect(state.waits.filter((wait) => wait.kind === 'operator')).toEqual([]);
    expect(state.status).toBe('completed');
    const intents = log.filter(
      (e): e is Extract<RunEvent, { type: 'tool_call_requested' }> => e.type === 'tool_call_requested',
    );
    expect(intents).toHaveLength(RANDOM_STEPS);
    const total = intents.reduce((sum, intent) => sum + (intent.data.args['amount'] as number), 0);
    expect(state.output).toEqual({ total });
    expect(log.filter((e) => e.type === 'thought')).toHaveLength(RANDOM_STEPS + 1);
    // The races were real: both replicas decided, more often than decisions were recorded; the losers'
    // executions were dropped and replayed cold.
    expect(decisions()).toBeGreaterThan(RANDOM_STEPS + 1);
    expect(replicas.every((replica) => replica.continuations.stats.cold > 0)).toBe(true);
    // Every replica that drove the finished run forgot it.
    expect(replicas.map((replica) => replica.continuations.size)).toEqual([0, 0]);
  });

  it('forgets a cancelled run on the replica that records its cancellation', async () => {
    const runId = 'code-cancelled';
    const [replica] = replicas;
    await submit(runId);
    await replica!.driver.drive(runId);
    expect(replica!.continuations.size).toBe(1);
    const cancel = { signalId: 'stop-1', name: CANCEL_SIGNAL, payload: { reason: 'test' } };
    await setup.store.append(runId, [testEvent(runId, 'signal_received', cancel, 1)], { expectedSeq: 'any' });
    const outcome = await replica!.driver.drive(runId);
    expect(outcome.state.status).toBe('cancelled');
    expect(replica!.continuations.size).toBe(0);
  });
});
