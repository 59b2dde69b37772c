import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STREAMS, type RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { useTestInfra } from '@dura/testing';
import { createRunDriver, type DriveOutcome, type RunDriver } from '../src/index';
import { createScriptedModel } from '@dura/agents';
import { scriptedRequest } from './run-history';
import {
  connect,
  countBy,
  countingModel,
  prepare,
  storedMessages,
  testLogger,
  type Connections,
  type CountingModel,
  appendRequest,
  completeOpenCall,
} from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const RACERS = 20;
const STEPS = 3;
const infra = useTestInfra({ database: false });
const replicas: { conn?: Connections; model: CountingModel; driver?: RunDriver }[] = [
  { model: countingModel(createScriptedModel(), () => 5 + Math.random() * 20) },
  { model: countingModel(createScriptedModel(), () => 5 + Math.random() * 20) },
];
let setup: Connections;

beforeAll(async () => {
  setup = await prepare(infra().nats.url);
  for (const [i, replica] of replicas.entries()) {
    replica.conn = await connect(infra().nats.url, `planner-${i}`);
    replica.driver = createRunDriver({
      store: replica.conn.store,
      js: replica.conn.js,
      model: replica.model,
      log: testLogger(`planner-${i}`),
      clock: () => new Date(),
    });
  }
});

afterAll(async () => {
  await Promise.allSettled(replicas.flatMap((replica) => (replica.conn ? [replica.conn.close()] : [])));
  await setup?.close();
});

/** RACERS concurrent drive() calls, alternating between the two replicas. */
function race(runId: string): Promise<DriveOutcome[]> {
  return Promise.all(Array.from({ length: RACERS }, (_, i) => replicas[i % 2]!.driver!.drive(runId)));
}

describe('two planner replicas racing drive() on the same run', () => {
  it('never both record a decision: one thought and one intent per step, however many model calls', async () => {
    const runId = 'run-race';
    const steps = Array.from({ length: STEPS }, (_, i) => ({ tool: 'echo', args: { step: i + 1 } }));
    await appendRequest(setup.store, scriptedRequest(runId, steps));

    let reportedModelCalls = 0;
    for (let round = 1; round <= STEPS + 1; round += 1) {
      const outcomes = await race(runId);
      reportedModelCalls += outcomes.reduce((n, outcome) => n + outcome.modelCalls, 0);
      const log = await setup.store.read(runId);
      const state = fold(log);
      if (round <= STEPS) {
        expect(state).toMatchObject({ status: 'running', steps: round, decisions: round });
        // Stand in for the gateway: the call's observation arrives, and the next round decides again.
        await completeOpenCall(setup.store, runId, { step: round }, round);
      } else {
        expect(state).toMatchObject({ status: 'completed', decisions: STEPS + 1, output: { step: STEPS } });
      }
    }

    const log = await setup.store.read(runId);
    const thoughts = log.filter((e): e is Extract<RunEvent, { type: 'thought' }> => e.type === 'thought');
    const intents = log.filter(
      (e): e is Extract<RunEvent, { type: 'tool_call_requested' }> => e.type === 'tool_call_requested',
    );
    expect(thoughts.map((t) => t.data.step)).toEqual([0, 1, 2, 3]);
    expect([...countBy(thoughts, (t) => t.data.step).values()].every((n) => n === 1)).toBe(true);
    expect(intents.map((i) => i.data.step)).toEqual([1, 2, 3]);
    expect(log.filter((e) => e.type === 'run_started')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'run_completed')).toHaveLength(1);
    // Ids are unique: a lost race never slips a second copy of an event in under another id.
    expect(new Set(log.map((e) => e.meta.id)).size).toBe(log.length);

    // The race was real: more model calls than recorded decisions, from both replicas.
    const modelCalls = replicas.reduce((n, replica) => n + replica.model.calls, 0);
    expect(reportedModelCalls).toBe(modelCalls);
    expect(modelCalls).toBeGreaterThan(thoughts.length);
    expect(replicas.every((replica) => replica.model.calls > 0)).toBe(true);

    // Every racer that dispatched sent the same task under the same msg-id: one task per key on the stream.
    const tasks = await storedMessages(setup.jsm, STREAMS.tasks, 'dura.task.tool.echo');
    const keys = tasks.map((msg) => msg.header?.get('Nats-Msg-Id'));
    expect(keys.sort()).toEqual(intents.map((i) => i.data.idempotencyKey).sort());
  });
});
