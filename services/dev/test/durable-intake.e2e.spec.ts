import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuraClient } from '@dura/client';
import { DeadLetterSchema, STREAMS, SUBJECTS, type DeadLetter, type RunEvent } from '@dura/contracts';
import { readRaw } from '@dura/event-store';
import { useTestInfra, type ManagedProcess } from '@dura/testing';
import { echoPlan, eventually, getJson, openSystem, startService, type SystemHandles } from './system';

const infra = useTestInfra();
let system: SystemHandles;
const processes: ManagedProcess[] = [];

beforeAll(async () => {
  system = await openSystem(infra().nats.url, infra().db.url);
  // Gateway and projector first: the planner is deliberately not running yet.
  processes.push(await startService('tool-gateway', system.env), await startService('projector', system.env));
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(processes.map((proc) => proc.kill('SIGTERM')));
  await system?.close();
});

async function drain(runId: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of createDuraClient(system).watchRun(runId)) events.push(event);
  return events;
}

async function deadLetters(): Promise<DeadLetter[]> {
  const info = await system.jsm.streams.info(STREAMS.deadLetters);
  const out: DeadLetter[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq += 1) {
    const msg = await system.jsm.streams.getMessage(STREAMS.deadLetters, { seq });
    if (msg) out.push(DeadLetterSchema.parse(msg.json()));
  }
  return out;
}

describe('run requests', () => {
  it('published while no planner runs are kept, and complete once a planner starts', async () => {
    // The gateway created the streams, so the request is stored durably with no planner listening.
    const ack = await system.js.publish(SUBJECTS.submit, JSON.stringify(echoPlan('e2e-early', 3)), {
      msgID: 'e2e-early',
    });
    expect(ack.stream).toBe(STREAMS.requests);
    const before = await readRaw(system.js, system.jsm, 'dura.run.e2e-early', 1);
    expect(before).toHaveLength(0);

    processes.push(await startService('planner', system.env));
    const events = await drain('e2e-early');
    expect(events.at(-1)?.type).toBe('run_completed');
    expect(events.filter((e) => e.type === 'tool_call_completed')).toHaveLength(3);
  });

  it('that are malformed are rejected with the reason, visible to operators, and do not stop the next run', async () => {
    const publish = (payload: string, msgID: string) =>
      system.js.publish(SUBJECTS.submit, payload, { msgID });
    await publish('{"v":1, "runId": "e2e-bad-json", agent: oops}', 'e2e-bad-json');
    await publish(
      JSON.stringify({ v: 1, runId: 'e2e-wrong-schema', agent: { kind: 'scripted', steps: 'nope' } }),
      'e2e-wrong-schema',
    );
    await publish(
      JSON.stringify({
        v: 1,
        runId: 'e2e-unknown-tool',
        agent: {
          kind: 'scripted',
          steps: [
            { tool: 'echo', args: {} },
            { tool: 'deploy.rocket', args: {} },
          ],
        },
      }),
      'e2e-unknown-tool',
    );
    await publish(JSON.stringify({ hello: 'world' }), 'not a valid run id');
    await publish(JSON.stringify(echoPlan('e2e-after-bad', 2)), 'e2e-after-bad');

    const good = await drain('e2e-after-bad');
    expect(good.at(-1)?.type).toBe('run_completed');

    const expectations = [
      { runId: 'e2e-bad-json', code: 'bad_json', issue: undefined },
      { runId: 'e2e-wrong-schema', code: 'invalid_request', issue: /agent\.steps/ },
      {
        runId: 'e2e-unknown-tool',
        code: 'unknown_tool',
        issue: /agent\.steps\.1\.tool: unknown tool "deploy\.rocket"/,
      },
    ];
    for (const { runId, code, issue } of expectations) {
      const events = await drain(runId);
      expect(events).toHaveLength(1);
      const [rejected] = events;
      expect(rejected?.type).toBe('run_rejected');
      if (rejected?.type !== 'run_rejected') continue;
      expect(rejected.data.error.code).toBe(code);
      if (issue) expect(rejected.data.issues?.join('\n')).toMatch(issue);
      const projected = await eventually(async () => {
        const { status, body } = await getJson(`${system.apiUrl}/runs/${runId}`);
        return status === 200 ? (body as { status: string; error: { code: string } }) : undefined;
      }, `the projection of ${runId}`);
      expect(projected.status).toBe('rejected');
      expect(projected.error.code).toBe(code);
    }

    const letters = await eventually(async () => {
      const all = await deadLetters();
      return all.length >= 4 ? all : undefined;
    }, 'four dead letters');
    const bySource = letters.filter((letter) => letter.source === 'requests');
    expect(bySource.map((l) => l.error.code).sort()).toEqual([
      'bad_json',
      'invalid_request',
      'invalid_request',
      'unknown_tool',
    ]);
    const badJson = bySource.find((l) => l.error.code === 'bad_json');
    expect(badJson?.payload).toContain('agent: oops');
    expect(badJson?.error.message).toMatch(/not valid JSON/);
    const anonymous = bySource.find((l) => l.runId === undefined);
    expect(anonymous?.issues?.join('\n')).toMatch(/agent/);
  });
});
