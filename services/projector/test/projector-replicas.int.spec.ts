import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runSubject } from '@dura/contracts';
import { createTestDatabase, useTestInfra, type TestDatabaseHandle } from '@dura/testing';
import { createProjector, migrateProjector, type Projector } from '../src/index';
import {
  RunScript,
  STREAM_OPTIONS,
  asJson,
  caughtUp,
  connect,
  foldLog,
  prepare,
  snapshot,
  streamMessages,
  testLogger,
  type Connections,
} from './support';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const opened: Connections[] = [];
const projectors: Projector[] = [];
let setup: Connections;
let single: TestDatabaseHandle | undefined;

beforeAll(async () => {
  setup = await prepare(infra().nats.url, infra().db.url);
  single = await createTestDatabase({ prefix: 'projector_single' });
});

afterAll(async () => {
  await Promise.allSettled(projectors.map((projector) => projector.stop()));
  await Promise.allSettled(opened.map((conn) => conn.close()));
  await setup?.close();
  await single?.drop();
});

async function startProjector(databaseUrl: string, name: string, batchSize: number): Promise<Projector> {
  const conn = await connect(infra().nats.url, databaseUrl, name);
  opened.push(conn);
  await migrateProjector(conn.database);
  const projector = createProjector({ ...conn, log: testLogger(name), batchSize, streams: STREAM_OPTIONS });
  projectors.push(projector);
  await projector.start();
  return projector;
}

describe('two projectors over the same database and stream', () => {
  it('end with the same state as one projector, which is the fold of the log', async () => {
    // Different batch sizes, so the two replicas' transactions overlap at unaligned positions.
    const [first, second] = [
      await startProjector(infra().db.url, 'projector-a', 3),
      await startProjector(infra().db.url, 'projector-b', 7),
    ];
    const scripts = Array.from({ length: 6 }, (_, i) => RunScript.complete(`run-${i}`, 2 + i));
    // Runs append concurrently while both projectors are consuming.
    await Promise.all(
      scripts.map(async (script) => {
        for (const event of script.events)
          await setup.store.append(script.runId, [event], { expectedSeq: 'any' });
      }),
    );
    await setup.js.publish(runSubject('run-0'), 'not an event');
    await setup.store.append(
      'run-1',
      [{ ...scripts[1]!.events[1]!, meta: { ...scripts[1]!.events[1]!.meta, id: 'late-start' } }],
      {
        expectedSeq: 'any',
      },
    );
    await caughtUp(setup, first.position);
    await caughtUp(setup, second.position);

    const messages = await streamMessages(setup);
    const shared = await snapshot(setup.db);
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
    const alone = await startProjector(single!.url, 'projector-single', 500);
    await caughtUp(setup, alone.position);
    const singleConn = opened.at(-1)!;
    expect(await snapshot(singleConn.db)).toEqual(shared);
  });
});
