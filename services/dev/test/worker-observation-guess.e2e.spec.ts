// A worker driving one run sends each observation together with the next model turn, the turn guarded by
// the sequence the observation is guessed to take and by following it. Here a tool takes that sequence
// first (it appends to another run's log while it runs), so every guess is wrong: the turn is refused, and
// the same decision goes behind the observation where it landed, without asking the model again.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fold, initialRunState } from '@dura/core';
import { createLogger } from '@dura/service-kit';
import { useTestInfra } from '@dura/testing';
import { startStack, type Stack } from '../src/stack';
import { eventually } from './system';

const CROWDING_TOOLS = fileURLToPath(new URL('./fixtures/crowding-tools.ts', import.meta.url));
const STEPS = 5;

const infra = useTestInfra();
const lines: string[] = [];
let stack: Stack;

beforeAll(async () => {
  process.env['CROWD_NATS_URL'] = infra().nats.url;
  stack = await startStack({
    natsUrl: infra().nats.url,
    databaseUrl: infra().db.url,
    httpPort: 0,
    log: createLogger({ service: 'dev', level: 'debug', format: 'json', write: (line) => lines.push(line) }),
    toolModules: [CROWDING_TOOLS],
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** The captured log lines of `runId` whose message is `msg`. */
function logged(msg: string, runId: string): Record<string, unknown>[] {
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry['msg'] === msg && entry['runId'] === runId);
}

/** Submits a scripted run of `STEPS` calls of `tool` and returns its log once it ended. */
async function runToEnd(runId: string, tool: string) {
  await stack.client.submitRun({
    runId,
    agent: {
      kind: 'scripted',
      steps: Array.from({ length: STEPS }, (_, i) => ({ tool, args: { step: i + 1 } })),
    },
  });
  return eventually(
    async () => {
      const events = await stack.client.readEvents(runId);
      return events.some((e) => e.type === 'run_completed' || e.type === 'run_failed') ? events : undefined;
    },
    `${runId} to end`,
    60_000,
  );
}

describe('a worker driving one run', () => {
  it('puts each decision behind its observation where it landed when another append took the guessed sequence', async () => {
    const runId = 'guess-crowded';
    const log = await runToEnd(runId, 'test.crowd');

    expect(log.map((e) => e.type)).toEqual([
      'run_requested',
      'run_started',
      ...Array.from({ length: STEPS }, () => [
        'thought',
        'tool_call_requested',
        'tool_call_completed',
      ]).flat(),
      'thought',
      'run_completed',
    ]);
    const state = fold(log, initialRunState());
    expect(state.status).toBe('completed');
    expect(state.calls.map((c) => c.attempts)).toEqual(Array.from({ length: STEPS }, () => 1));
    // Every observation after the first step's landed one later than guessed (the crowding event took the
    // guessed sequence), and each decision went behind it without a re-fold, so the model was asked once.
    const misses = logged('an observation landed at another sequence than guessed', runId);
    expect(misses).toHaveLength(STEPS);
    for (const miss of misses) expect(miss['landed']).toBe((miss['guessed'] as number) + 1);
    expect(logged('lost an append race; re-folding', runId)).toEqual([]);
    const crowd = await stack.client.readEvents(`${runId}-crowd`);
    expect(crowd.map((e) => e.type)).toEqual(Array.from({ length: STEPS }, () => 'signal_received'));
  });

  it('guesses right when nothing else reaches the stream: no decision is placed again', async () => {
    const runId = 'guess-alone';
    const log = await runToEnd(runId, 'echo');

    expect(fold(log, initialRunState()).status).toBe('completed');
    expect(log.filter((e) => e.type === 'tool_call_completed')).toHaveLength(STEPS);
    expect(logged('an observation landed at another sequence than guessed', runId)).toEqual([]);
    expect(logged('lost an append race; re-folding', runId)).toEqual([]);
    // Each observation sits right behind its intent, and each decision right behind that observation.
    for (const [i, event] of log.entries()) {
      if (event.type === 'tool_call_completed') expect(log[i - 1]?.type).toBe('tool_call_requested');
      if (event.type === 'thought' && i > 2) expect(log[i - 1]?.type).toBe('tool_call_completed');
      if (i > 0)
        expect(event.seq, 'nothing else reached the stream in between').toBe((log[i - 1]?.seq ?? 0) + 1);
    }
  });
});
