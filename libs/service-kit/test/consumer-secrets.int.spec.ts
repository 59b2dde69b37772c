import { describe, expect, it } from 'vitest';
import { DuraError } from '@dura/contracts';
import { RetryLater } from '../src/retry-later';
import { STREAM, useConsumerHarness } from './consumer-harness';
import { deadLetters, eventually, useTestInfra } from './infra';

const infra = useTestInfra({ database: false });
const kit = useConsumerHarness(infra);

/** Whether the stream still holds the message at `seq` (an erased one is gone). */
async function holds(seq: number): Promise<boolean> {
  const msg = await kit
    .nats()
    .jsm.streams.getMessage(STREAM, { seq })
    .catch(() => null);
  return msg !== null;
}

describe('a consumer loop over messages that may hold secrets', () => {
  it('requeues a waiting message as the bytes the handler gives, then runs its hook (erasing the original)', async () => {
    const seen: string[] = [];
    const erased: number[] = [];
    await kit.start('sealed-wait', (msg) => {
      seen.push(msg.string());
      if (seen.length === 1)
        throw new RetryLater('tenant at its limit', 10, {
          requeue: true,
          data: new TextEncoder().encode('sealed'),
          requeued: async () => {
            await kit.nats().jsm.streams.deleteMessage(STREAM, msg.seq, true);
            erased.push(msg.seq);
          },
        });
    });
    const [seq] = await kit.publish('sealed-wait', 'clear-secret');

    await eventually(() => expect(seen).toEqual(['clear-secret', 'sealed']));
    await eventually(() => expect(erased).toEqual([seq]));
    expect(await holds(seq!)).toBe(false);
    await eventually(() => kit.settled('sealed-wait'));
  });

  it('dead-letters a message redacted, then erases it; a message without secrets is kept as it is', async () => {
    const erased: number[] = [];
    await kit.start(
      'redacted',
      () => {
        throw new DuraError('bad_plan', 'refused');
      },
      {
        redact: (msg) =>
          msg.string().includes('secret')
            ? {
                payload: new TextEncoder().encode('[secret]'),
                erase: () => {
                  erased.push(msg.seq);
                  return Promise.resolve();
                },
              }
            : undefined,
      },
    );
    const [secretSeq] = await kit.publish('redacted', 'card secret 4242', 'plain');

    const letters = await eventually(async () => {
      const found = await deadLetters(kit.nats().jsm, 'redacted');
      expect(found).toHaveLength(2);
      return found;
    });
    expect(letters.map((l) => l.payload).sort()).toEqual(['[secret]', 'plain']);
    expect(JSON.stringify(letters)).not.toContain('4242');
    expect(erased).toEqual([secretSeq]);
  });
});
