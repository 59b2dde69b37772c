// Cancelling a run whose call runs in place (the dev stack and `npm run worker`: planner and gateway in one
// process). The drive holds the run while the call runs, so the `cancel` signal's own drive, which records
// `run_cancelled`, waits for the call to end. The signal intake marks the run in the cancellations bucket as
// soon as the signal is recorded, and the gateway's watcher aborts the call: the run ends cancelled long
// before the call would have, and no later step runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@dura/service-kit';
import { useTestInfra } from '@dura/testing';
import { startStack, type Stack } from '../src/stack';
import { AGENT3_TOOLS, eventsOf, useScratch } from './tool-scratch';
import { eventually } from './system';

/** How long the call would run if nobody aborted it. */
const SLOW_MS = 25_000;

const infra = useTestInfra();
const scratch = useScratch();
let stack: Stack;

beforeAll(async () => {
  for (const [name, value] of Object.entries(scratch().env())) process.env[name] = value;
  stack = await startStack({
    natsUrl: infra().nats.url,
    databaseUrl: infra().db.url,
    httpPort: 0,
    log: createLogger({ service: 'dev', level: 'warn' }),
    toolModules: [AGENT3_TOOLS],
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('a call run in place', () => {
  it('is aborted by a cancel: the run ends cancelled with the reason, long before the call would, and no later step runs', async () => {
    const runId = 'in-place-cancelled';
    await stack.client.submitRun({
      runId,
      agent: {
        kind: 'scripted',
        steps: [
          { tool: 'test.slow', args: { label: runId, maxMs: SLOW_MS } },
          { tool: 'echo', args: { text: 'never' } },
        ],
      },
    });
    await eventually(
      async () => (await scratch().toolLog()).find((e) => e.runId === runId && e.event === 'started'),
      `${runId}: the call to start`,
      30_000,
    );

    await stack.client.cancel(runId, { reason: 'stopped while its call ran in place' });
    const log = await eventually(
      async () => {
        const events = await stack.client.readEvents(runId);
        return events.some((e) => e.type === 'run_cancelled') &&
          events.some((e) => e.type === 'tool_call_failed')
          ? events
          : undefined;
      },
      `${runId}: run_cancelled and the aborted call recorded`,
      SLOW_MS - 5_000,
    );

    expect(eventsOf(log, 'run_cancelled').map((e) => e.data.reason)).toEqual([
      'stopped while its call ran in place',
    ]);
    const failed = eventsOf(log, 'tool_call_failed');
    expect(failed.map((e) => e.data.error.code)).toEqual(['cancelled']);
    const aborted = (await scratch().toolLog()).find((e) => e.runId === runId && e.event === 'aborted');
    expect(aborted?.elapsedMs, 'the tool saw the abort long before its end').toBeLessThan(SLOW_MS - 5_000);
    expect(aborted?.reason).toContain('stopped while its call ran in place');
    expect(
      eventsOf(log, 'tool_call_requested').map((e) => e.data.tool),
      'no later step is requested',
    ).toEqual(['test.slow']);
    expect((await scratch().toolLog()).filter((e) => e.runId === runId && e.event === 'finished')).toEqual(
      [],
    );
  });
});
