import { describe, expect, it, vi } from 'vitest';
import type { Db } from '@dura/db';
import { readCheckpoint, type Projector } from '../src/index';
import {
  RunScript,
  appendInterleaved,
  asJson,
  caughtUp,
  foldLog,
  lastStreamSeq,
  sleep,
  snapshot,
  streamMessages,
} from './support';
import { useProjectors } from './projector-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const file = useProjectors();
const setup = () => file.setup();
let current: Projector | undefined;

interface Applied {
  /** Transactions that applied a batch, and the messages they applied. */
  batches: number;
  applied: number;
}

/** The database, with every applyBatch transaction counted: a re-applied message would show up here. */
function counting(db: Db, seen: Applied): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'transaction') {
        return async (...args: Parameters<Db['transaction']>) => {
          const result: unknown = await target.transaction(...args);
          seen.batches += 1;
          seen.applied += (result as { applied: number }).applied;
          return result;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A new projector instance on new connections: what a restarted process is. */
let restarts = 0;
async function restart(): Promise<{ projector: Projector; seen: Applied }> {
  await current?.stop();
  const seen: Applied = { batches: 0, applied: 0 };
  ({ projector: current } = await file.start(`projector-${restarts++}`, {
    batchSize: 5,
    db: (db) => counting(db, seen),
  }));
  return { projector: current, seen };
}

describe('a restarted projector', () => {
  it('resumes from its checkpoint without re-applying what it already projected', async () => {
    const first = await restart();
    const before = RunScript.complete('run-before', 3);
    await appendInterleaved(setup().store, [before]);
    await caughtUp(setup(), first.projector.position);
    expect(first.seen.applied).toBe(before.events.length);
    const checkpoint = await readCheckpoint(setup().db);
    const projected = await snapshot(setup().db);

    const second = await restart();
    expect(second.projector.position()).toBe(checkpoint);
    await sleep(500); // time enough to re-read the stream, if it were going to
    expect(second.seen).toEqual({ batches: 0, applied: 0 });
    expect(await snapshot(setup().db)).toEqual(projected);

    const after = RunScript.complete('run-after', 2);
    await appendInterleaved(setup().store, [after]);
    await caughtUp(setup(), second.projector.position);
    expect(second.seen.applied).toBe(after.events.length);
    expect(await readCheckpoint(setup().db)).toBe(await lastStreamSeq(setup()));
  });

  it('catches up on events appended while no projector ran, applying each once', async () => {
    await current?.stop();
    current = undefined;
    const checkpoint = await readCheckpoint(setup().db);
    const offline = [RunScript.complete('run-offline-1', 2), RunScript.complete('run-offline-2', 4)];
    await appendInterleaved(setup().store, offline);
    const missed = offline.reduce((n, script) => n + script.events.length, 0);
    expect((await lastStreamSeq(setup())) - checkpoint).toBe(missed);

    const third = await restart();
    expect(third.projector.position()).toBe(checkpoint);
    await caughtUp(setup(), third.projector.position);
    expect(third.seen.applied).toBe(missed);

    const messages = await streamMessages(setup());
    const state = await snapshot(setup().db);
    expect(state.events).toHaveLength(messages.length);
    const folded = foldLog(messages);
    for (const row of state.runs) expect(row.state).toEqual(asJson(folded.get(row.runId)));
    expect(state.runs.map((row) => row.runId)).toEqual([
      'run-after',
      'run-before',
      'run-offline-1',
      'run-offline-2',
    ]);
  });
});
