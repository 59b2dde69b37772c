import { describe, expect, it, vi } from 'vitest';
import { STREAMS, SUBJECTS, type DeadLetter } from '@dura/contracts';
import { useTestInfra } from '@dura/testing';
import { PLANNER_CONSUMERS } from '../src/index';
import { scriptedRequest } from './run-history';
import { eventually, storedMessages, typesOf, appendRequest, untilDeadLetters } from './support';
import { usePlanner } from './planner-harness';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra({ database: false });
const env = usePlanner(infra);

function deadLetters(count: number): Promise<DeadLetter[]> {
  return untilDeadLetters(env.setup.jsm, 'dura.dlq.decide', count);
}

describe('decide tasks the planner cannot read', () => {
  it('are dead-lettered on dura.dlq.decide with the reason and the original bytes', async () => {
    const garbage = await env.setup.js.publish(SUBJECTS.decideTask, 'definitely { not json', {
      msgID: 'garbage-decide',
    });
    const [letter] = await deadLetters(1);
    expect(letter).toMatchObject({
      v: 1,
      source: 'decide',
      subject: SUBJECTS.decideTask,
      streamSeq: garbage.seq,
      deliveries: 1,
      payload: 'definitely { not json',
      payloadEncoding: 'utf8',
      error: { code: 'contract_violation', message: expect.stringMatching(/^decide task is not valid JSON/) },
    });
  });

  it('are dead-lettered with the schema issues when they are JSON of the wrong shape', async () => {
    const body = JSON.stringify({ v: 1, runId: 'not a valid id!', afterSeq: -1, reason: 'whim' });
    await env.setup.js.publish(SUBJECTS.decideTask, body, { msgID: 'bad-shape-decide' });
    const letter = (await deadLetters(2))[1];
    expect(letter).toMatchObject({
      payload: body,
      error: { code: 'contract_violation', message: 'decide task does not match its schema' },
    });
    expect(letter?.issues?.map((issue) => issue.split(':')[0]).sort()).toEqual([
      'afterSeq',
      'reason',
      'runId',
    ]);
  });

  it('do not wedge the consumer: the next valid decide task moves its run', async () => {
    const runId = 'run-after-garbage';
    const lastSeq = await appendRequest(
      env.setup.store,
      scriptedRequest(runId, [{ tool: 'echo', args: { n: 1 } }]),
    );
    await env.setup.js.publish(
      SUBJECTS.decideTask,
      JSON.stringify({ v: 1, runId, afterSeq: lastSeq, reason: 'resume' }),
      { msgID: `${runId}@${lastSeq}` },
    );

    const log = await eventually(async () => {
      const events = await env.setup.store.read(runId);
      return events.at(-1)?.type === 'tool_call_requested' ? events : undefined;
    }, `${runId} to reach its first intent`);
    expect(typesOf(log)).toEqual(['run_requested', 'run_started', 'thought', 'tool_call_requested']);

    // The task is acked once its drive returns, a moment after the intent lands: the consumer drains.
    await eventually(async () => {
      const info = await env.setup.jsm.consumers.info(STREAMS.tasks, PLANNER_CONSUMERS.decide.durable);
      return info.num_pending + info.num_ack_pending === 0 ? info : undefined;
    }, 'the decide consumer to have nothing pending or unacked');
    expect(await storedMessages(env.setup.jsm, STREAMS.deadLetters, 'dura.dlq.decide')).toHaveLength(2);
  });
});
