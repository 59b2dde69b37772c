// A worker's drive of a parallel group: when some of the group's observations go out through the relay (a
// row queued behind another of its run), the drive that ran the calls goes on from them itself. Nothing here
// consumes decide tasks, so a drive that left the run to the relay's decide task would leave it standing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { newEvent, type RunRequest } from '@dura/contracts';
import { scriptedTurn, type Model } from '@dura/agents';
import { decisionEventId } from '@dura/core';
import { openDatabase, type DbHandle } from '@dura/db';
import { createEventStore } from '@dura/event-store';
import { createRunDriver } from '@dura/planner';
import { connectNats, createLogger, type NatsHandles } from '@dura/service-kit';
import { createToolGateway, migrateGateway, type ToolGateway } from '@dura/tool-gateway';
import { defineTool, ToolRegistry } from '@dura/tools';
import { useTestInfra } from '@dura/testing';

const infra = useTestInfra();
const GROUP = 8;

const instant = defineTool({
  name: 'test.instant',
  description: 'Answers at once with its argument.',
  input: z.object({ n: z.number().int() }),
  safety: 'idempotent',
  execute: (args) => Promise.resolve({ n: args.n }),
});

/** One decision of `GROUP` parallel calls, then the end of the run. */
const groupModel: Model = {
  decide: ({ state, request }) =>
    Promise.resolve(
      scriptedTurn(
        state,
        [{ parallel: Array.from({ length: GROUP }, (_, n) => ({ tool: 'test.instant', args: { n } })) }],
        'done',
        request.input,
      ),
    ),
};

const log = createLogger({
  service: 'worker',
  level: 'warn',
  write:
    process.env['DURA_TEST_VERBOSE'] === '1' ? (line) => process.stderr.write(`${line}\n`) : () => undefined,
});

let nats: NatsHandles | undefined;
let database: DbHandle | undefined;
let gateway: ToolGateway | undefined;

beforeAll(async () => {
  nats = await connectNats(infra().nats.url, 'worker-group-drive');
  database = await openDatabase({ url: infra().db.url });
  await migrateGateway(database);
  gateway = createToolGateway({
    ...nats,
    db: database.db,
    tools: new ToolRegistry([instant]),
    log,
    relayPollMs: 50,
  });
  await gateway.start();
});

afterAll(async () => {
  await gateway?.stop();
  await nats?.nc.close();
  await database?.close();
});

describe("a worker's drive of a parallel group", () => {
  it('goes on from the observations the relay published, without a decide task', async () => {
    const { js, jsm } = nats!;
    const store = createEventStore({ js, jsm });
    const driver = createRunDriver({
      store,
      js,
      model: groupModel,
      log,
      clock: () => new Date(),
      snapshots: false,
      localTools: gateway!.local,
    });
    for (let round = 1; round <= 5; round += 1) {
      const runId = `group-drive-${round}`;
      const request: RunRequest & { runId: string } = { v: 1, runId, agent: { kind: 'scripted', steps: [] } };
      const requested = newEvent(
        'run_requested',
        { request },
        { id: decisionEventId(runId, 0, 0), runId, ts: new Date().toISOString(), correlationId: runId },
      );
      await store.append(runId, [requested], { expectedSeq: 0 });

      const outcome = await driver.drive(runId);

      const events = await store.read(runId);
      const types = events.map((event) => event.type);
      expect(
        types.filter((type) => type === 'tool_call_completed'),
        runId,
      ).toHaveLength(GROUP);
      expect(outcome.state.status, `${runId}: ${types.join(' ')}`).toBe('completed');
      expect(types.at(-1)).toBe('run_completed');
    }
    // The case under test happened: observations of the groups went out through the relay.
    expect(gateway!.relay.publishCounts().relay).toBeGreaterThan(0);
  });
});
