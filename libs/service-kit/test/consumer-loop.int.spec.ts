import type { JsMsg } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { ContractViolation, DuraError } from '@dura/contracts';
import { firstPublished } from '../src/requeue';
import { RetryLater } from '../src/retry-later';
import { useConsumerHarness } from './consumer-harness';
import { deadLetters, eventually, useTestInfra } from './infra';

const infra = useTestInfra({ database: false });
const kit = useConsumerHarness(infra);

describe('startConsumerLoop', () => {
  it('handles each message once and acks it', async () => {
    const seen: string[] = [];
    await kit.start('happy', (msg) => {
      seen.push(msg.string());
    });
    await kit.publish('happy', 'a', 'b', 'c');

    await eventually(() => expect(seen).toEqual(['a', 'b', 'c']));
    const info = await eventually(() => kit.settled('happy'));
    expect(info.num_redelivered).toBe(0);
    expect(await deadLetters(kit.nats().jsm, 'happy')).toEqual([]);
  });

  it('dead-letters a message whose handler throws a terminal DuraError, once, and goes on with the next', async () => {
    const calls: string[] = [];
    const { records } = await kit.start(
      'terminal',
      (msg) => {
        calls.push(msg.string());
        if (msg.string() === 'violation')
          throw new ContractViolation('task is invalid', ['args.url: required']);
        if (msg.string() === 'unknown-tool') throw new DuraError('unknown_tool', 'no tool "deploy.rocket"');
      },
      { runIdOf: (msg) => msg.headers?.get('Dura-Run-Id') || undefined },
    );
    const [violationSeq, unknownSeq] = await kit.publish('terminal', 'violation', 'unknown-tool', 'next');

    await eventually(() => expect(calls).toEqual(['violation', 'unknown-tool', 'next']));
    await eventually(() => kit.settled('terminal'));
    const letters = await deadLetters(kit.nats().jsm, 'terminal');
    expect(letters).toEqual([
      expect.objectContaining({
        source: 'terminal',
        subject: 'kit.terminal',
        streamSeq: violationSeq,
        deliveries: 1,
        error: { code: 'contract_violation', message: 'task is invalid' },
        issues: ['args.url: required'],
        payload: 'violation',
        payloadEncoding: 'utf8',
      }),
      expect.objectContaining({
        streamSeq: unknownSeq,
        error: { code: 'unknown_tool', message: 'no tool "deploy.rocket"' },
        payload: 'unknown-tool',
      }),
    ]);
    expect(letters[1]).not.toHaveProperty('issues');
    expect(records.filter((r) => r.msg === 'message dead-lettered')).toHaveLength(2);
  });

  it('names the run in the dead letter when runIdOf finds one', async () => {
    await kit.start('with-run', () => Promise.reject(new ContractViolation('bad', [])), {
      runIdOf: (msg: JsMsg) => msg.string().split(':')[0],
    });
    await kit.publish('with-run', 'run-42:payload');

    const [letter] = await eventually(async () => {
      const letters = await deadLetters(kit.nats().jsm, 'with-run');
      expect(letters).toHaveLength(1);
      return letters;
    });
    expect(letter?.runId).toBe('run-42');
  });

  it('redelivers a message whose handler throws a plain or retryable error, and acks it once it succeeds', async () => {
    const deliveries: Record<string, number[]> = {};
    await kit.start('transient', (msg) => {
      const body = msg.string();
      (deliveries[body] ??= []).push(msg.info.deliveryCount);
      if (deliveries[body].length > 1) return;
      if (body === 'plain') throw new Error('connection reset');
      throw new DuraError('upstream_busy', 'try later', { retryable: true });
    });
    await kit.publish('transient', 'plain', 'retryable');

    await eventually(() => kit.settled('transient'));
    expect(deliveries).toEqual({ plain: [1, 2], retryable: [1, 2] });
    expect(await deadLetters(kit.nats().jsm, 'transient')).toEqual([]);
  });

  it("dead-letters a message that keeps failing after maxDeliver deliveries with code 'max_deliveries'", async () => {
    const deliveries: number[] = [];
    const handled: string[] = [];
    await kit.start(
      'poison',
      (msg) => {
        if (msg.string() !== 'poison') return void handled.push(msg.string());
        deliveries.push(msg.info.deliveryCount);
        throw new Error('flaky backend');
      },
      { maxDeliver: 3 },
    );
    const [poisonSeq] = await kit.publish('poison', 'poison', 'after');

    const letters = await eventually(async () => {
      const found = await deadLetters(kit.nats().jsm, 'poison');
      expect(found).toHaveLength(1);
      return found;
    });
    expect(letters[0]).toMatchObject({
      streamSeq: poisonSeq,
      deliveries: 3,
      error: {
        code: 'max_deliveries',
        message: expect.stringMatching(/gave up after 3 deliveries: flaky backend/),
      },
      payload: 'poison',
    });
    expect(deliveries).toEqual([1, 2, 3]);
    await eventually(() => expect(handled).toEqual(['after']));
    await eventually(() => kit.settled('poison'));
  });

  it('requeues a message that only has to wait, past its bounded deliveries, and never dead-letters it', async () => {
    const seen: { body: string; deliveries: number; first: number; msgId: string | undefined }[] = [];
    await kit.start(
      'waits',
      (msg) => {
        seen.push({
          body: msg.string(),
          deliveries: msg.info.deliveryCount,
          first: firstPublished(msg).seq,
          msgId: msg.headers?.get('Nats-Msg-Id'),
        });
        // Throttled five times with maxDeliver 2: redeliveries would dead-letter it at the second.
        if (seen.length <= 5) throw new RetryLater('tool at its limit', 10, { requeue: true });
      },
      { maxDeliver: 2 },
    );
    const [firstSeq] = await kit.publish('waits', 'call');

    await eventually(() => expect(seen).toHaveLength(6));
    await eventually(() => kit.settled('waits'));
    // Each wait was a fresh message (first delivery), carrying the same body.
    expect(seen.every((s) => s.body === 'call' && s.deliveries === 1)).toBe(true);
    // Every copy knows the sequence the message was first published at (run ids may derive from it).
    expect(seen.map((s) => s.first)).toEqual(Array.from({ length: 6 }, () => firstSeq));
    // A copy's msg-id names the first message and the copy it replaced; it does not grow with every wait.
    for (const s of seen.slice(1)) expect(s.msgId).toMatch(/^kit\.waits~q\d+$/);
    expect(await deadLetters(kit.nats().jsm, 'waits')).toEqual([]);
  });
});
