// The gate records of debounce and skip-if-running on a real nats-server, written by two "replicas" (two
// connections) at once: every write is a compare-and-set, so no arrival is lost and no two both start.
import { beforeAll, describe, expect, it } from 'vitest';
import { GATE_ASK_VERSION, type RunRequest } from '@dura/contracts';
import { askGate, createRunGates, gateEntryName, serveGateAsks, type RunGates } from '../src/index';
import { useNatsConnections, useTestInfra } from './infra';

const infra = useTestInfra({ database: false });
const openNats = useNatsConnections(infra);
let replicas: RunGates[];

beforeAll(async () => {
  const [a, b] = [await openNats(), await openNats()];
  // The key's last run is never in a log here: in flight for the grace after its start.
  replicas = [a, b].map((nats) => createRunGates({ js: nats.js, phaseOf: () => Promise.resolve('unseen') }));
});

const request =
  (n: number) =>
  (runId: string): RunRequest => ({
    v: 1,
    runId,
    agent: { kind: 'scripted', steps: [] },
    input: { n },
  });

describe('two replicas deciding for one key at once', () => {
  it('debounce: 40 events in random order across both end in one window holding the last one', async () => {
    const order = Array.from({ length: 40 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
    const outcomes = await Promise.all(
      order.map((n, i) =>
        replicas[i % 2]!.arrive({
          scope: 'trigger:race',
          key: 'k',
          request: request(n),
          source: `e${n}`,
          seq: n,
          runId: `trg-race-e${n}`,
          skipIfRunning: false,
          debounce: { windowMs: 60_000, windowRunId: (at) => `trg-race-w-${at}` },
        }),
      ),
    );
    const entry = await replicas[0]!.read(gateEntryName('trigger:race', 'k'));
    expect(entry?.record.window).toMatchObject({ source: 'e40', request: { input: { n: 40 } } });
    // Every arrival was either taken into the one window or found stale (a later one was taken first), and
    // the window counts each of them once: one run, 39 dropped.
    const windows = new Set(
      outcomes.flatMap((o) => {
        if (o.kind === 'debounced') return [o.runId];
        return o.kind === 'stale' && o.counted ? [o.counted.runId] : [];
      }),
    );
    expect(windows.size).toBe(1);
    const taken = outcomes.filter((o) => o.kind === 'debounced').length;
    const stale = outcomes.filter((o) => o.kind === 'stale').length;
    expect(taken + stale).toBe(40);
    expect(entry?.record.window?.events).toBe(40);
    expect(entry?.record.counts.debounced).toBe(39);
  });

  it('skip-if-running: 20 requests at once across both start exactly one run', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        replicas[i % 2]!.arrive({
          scope: 'runs:acme',
          key: 'nightly',
          request: request(i),
          source: `r${i}`,
          runId: `run-${i}`,
          skipIfRunning: true,
        }),
      ),
    );
    const started = outcomes.filter((o) => o.kind === 'started');
    expect(started).toHaveLength(1);
    const winner = started[0]!.kind === 'started' ? started[0]!.runId : '';
    expect(outcomes.filter((o) => o.kind === 'skipped')).toEqual(
      Array.from({ length: 19 }, () => ({ kind: 'skipped', runningRunId: winner })),
    );
  });
});

describe('the gate door (request/reply on dura.gate.runs)', () => {
  it('once ready, a door answers the first ask sent from another connection', async () => {
    // A planner is ready only after its door's `ready`: an ask sent before the server has the subscription
    // finds no responder, which the projector answers with a 503. Opened and asked 30 times in a row.
    const [planner, projector] = [await openNats(), await openNats()];
    const gates = createRunGates({ js: planner.js, phaseOf: () => Promise.resolve('unseen') });
    const log = { info: () => undefined, warn: () => undefined };
    const answers: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const door = serveGateAsks({ nc: planner.nc, gates, log, seal: (r) => r });
      await door.ready;
      const answer = await askGate(projector.nc, {
        v: GATE_ASK_VERSION,
        scope: 'runs:acme',
        key: `door-${i}`,
        windowMs: 60_000,
        skipIfRunning: false,
        source: `ask-${i}`,
        windowRunIdPrefix: 'deb-door-',
        request: request(i)(`ask-${i}`),
      }).then(
        (a) => ('debounced' in a ? 'debounced' : `refused: ${a.refused.message}`),
        (err: unknown) => `unanswered: ${String(err)}`,
      );
      answers.push(answer);
      await door.stop();
    }
    expect(answers).toEqual(Array.from({ length: 30 }, () => 'debounced'));
  });
});
