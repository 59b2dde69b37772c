import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runSubject } from '@dura/contracts';
import { createTestDatabase, type TestDatabaseHandle } from '@dura/testing';
import type { Projector } from '../src/index';
import { RunScript, asJson, caughtUp, foldLog, snapshot, streamMessages } from './support';
import { useProjectors } from './projector-harness';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let single: TestDatabaseHandle | undefined;
// Registered before the projectors' hooks, so the database is dropped once their connections are closed.
beforeAll(async () => {
  single = await createTestDatabase({ prefix: 'projector_single' });
});
afterAll(async () => {
  await single?.drop();
});

const file = useProjectors();
const setup = () => file.setup();

async function startProjector(databaseUrl: string, name: string, batchSize: number): Promise<Projector> {
  return (await file.start(name, { batchSize, databaseUrl, migrate: true })).projector;
}

describe('two projectors over the same database and stream', () => {
  it('end with the same state as one projector, which is the fold of the log', async () => {
    // Different batch sizes, so the two replicas' transactions overlap at unaligned positions.
    const [first, second] = [
      await startProjector(file.infra().db.url, 'projector-a', 3),
      await startProjector(file.infra().db.url, 'projector-b', 7),
    ];
    const scripts = Array.from({ length: 6 }, (_, i) => RunScript.complete(`run-${i}`, 2 + i));
    // Runs append concurrently while both projectors are consuming.
    await Promise.all(
      scripts.map(async (script) => {
        for (const event of script.events)
          await setup().store.append(script.runId, [event], { expectedSeq: 'any' });
      }),
    );
    await setup().js.publish(runSubject('run-0'), 'not an event');
    await setup().store.append(
      'run-1',
      [{ ...scripts[1]!.events[1]!, meta: { ...scripts[1]!.events[1]!.meta, id: 'late-start' } }],
      {
        expectedSeq: 'any',
      },
    );
    await caughtUp(setup(), first.position);
    await caughtUp(setup(), second.position);

    const messages = await streamMessages(setup());
    const shared = await snapshot(setup().db);
    expect(shared.checkpoints).toEqual([{ name: 'DURA_RUNS', lastSeq: messages.at(-1)?.seq }]);
    expect(shared.errors.map((e) => e.code).sort()).toEqual(['corrupt_event', 'invalid_transition']);
    expect(shared.events).toHaveLength(messages.length - 2);
    expect(new Set(shared.events.map((e) => e.seq)).size).toBe(shared.events.length);

    const folded = foldLog(messages);
    expect(shared.runs.map((row) => row.runId)).toEqual([...folded.keys()].sort());
    for (const row of shared.runs) {
      expect(row.state).toEqual(asJson(folded.get(row.runId)));
      expect(row.status).toBe('completed');
    }

    // The same stream through one projector into its own database.
    const { projector: alone, conn: singleConn } = await file.start('projector-single', {
      batchSize: 500,
      databaseUrl: single!.url,
      migrate: true,
    });
    await caughtUp(setup(), alone.position);
    expect(await snapshot(singleConn.db)).toEqual(shared);
  });
});
