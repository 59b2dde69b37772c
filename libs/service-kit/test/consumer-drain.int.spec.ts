import { describe, expect, it } from 'vitest';
import { STREAM, useConsumerHarness } from './consumer-harness';
import { eventually, sleep, useTestInfra } from './infra';

const infra = useTestInfra({ database: false });
const kit = useConsumerHarness(infra);

// The harness's ack wait is 5 s: a message back in well under that was handed back, not timed out.
const FAR_BELOW_ACK_WAIT_MS = 2_500;

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe('ConsumerLoop.stop with a drain deadline', () => {
  it('lets a handler that ends before the deadline finish and acks it', async () => {
    const started: string[] = [];
    const finished: string[] = [];
    const { loop, records } = await kit.start('drain-finishes', async (msg) => {
      started.push(msg.string());
      await sleep(600);
      finished.push(msg.string());
    });
    await kit.publish('drain-finishes', 'slow');
    await eventually(() => expect(started).toEqual(['slow']));

    const report = await loop.stop({ deadline: Date.now() + 5_000 });

    expect(finished).toEqual(['slow']);
    expect(report).toEqual({ finished: 1, handedBack: [], unstarted: 0 });
    const info = await eventually(() => kit.settled('drain-finishes'));
    expect(info.num_redelivered).toBe(0);
    const messages = records.map((r) => r['msg']);
    expect(messages).toContain('draining: 1 in flight');
    expect(messages.find((m) => /^drained in \d+ ms$/.test(String(m)))).toBeDefined();
  });

  it("hands back a handler still running at the deadline: nak'ed, and another loop gets it at once", async () => {
    const stuck = gate();
    const firstLoop: number[] = [];
    const { loop } = await kit.start('drain-hands-back', async (msg) => {
      firstLoop.push(msg.info.deliveryCount);
      await stuck.wait;
    });
    try {
      const [seq] = await kit.publish('drain-hands-back', 'long');
      await eventually(() => expect(firstLoop).toEqual([1]));

      // Another replica: a second loop on the same durable, already waiting for work.
      const secondLoop: number[] = [];
      await kit.start('drain-hands-back', (msg) => {
        secondLoop.push(msg.info.deliveryCount);
      });

      const stopAt = Date.now();
      const report = await loop.stop({ deadline: stopAt + 400 });
      const stoppedIn = Date.now() - stopAt;

      expect(stoppedIn).toBeGreaterThanOrEqual(390);
      expect(stoppedIn).toBeLessThan(1_500);
      expect(report.finished).toBe(0);
      expect(report.handedBack.map((msg) => msg.seq)).toEqual([seq]);
      // A redelivery, long before the ack wait would have brought it back.
      await eventually(() => expect(secondLoop).toEqual([2]), FAR_BELOW_ACK_WAIT_MS);
      expect(Date.now() - stopAt).toBeLessThan(FAR_BELOW_ACK_WAIT_MS + 400);
    } finally {
      stuck.open();
    }
    await eventually(() => kit.settled('drain-hands-back'));
    expect(firstLoop).toEqual([1]);
  });

  it('hands back a handler still running at the deadline to a replica that starts only after the stop', async () => {
    const stuck = gate();
    const firstLoop: number[] = [];
    const { loop } = await kit.start('drain-hands-back-later', async (msg) => {
      firstLoop.push(msg.info.deliveryCount);
      await stuck.wait;
    });
    const secondLoop: number[] = [];
    try {
      const [seq] = await kit.publish('drain-hands-back-later', 'long');
      await eventually(() => expect(firstLoop).toEqual([1]));

      const report = await loop.stop({ deadline: Date.now() + 400 });
      expect(report.handedBack.map((msg) => msg.seq)).toEqual([seq]);

      await kit.start('drain-hands-back-later', (msg) => {
        secondLoop.push(msg.info.deliveryCount);
      });
      // Its second delivery: a hand-back counted as a first delivery would never use up its bounded deliveries.
      await eventually(() => expect(secondLoop).toEqual([2]), FAR_BELOW_ACK_WAIT_MS);
    } finally {
      stuck.open();
    }
    await eventually(() => kit.settled('drain-hands-back-later'));
    expect(firstLoop).toEqual([1]);
  });

  it('stops fetching at once and hands back what it fetched but had not started', async () => {
    const first = gate();
    const firstLoop: string[] = [];
    const { loop } = await kit.start(
      'drain-unstarted',
      async (msg) => {
        firstLoop.push(msg.string());
        await first.wait;
      },
      { concurrency: 1 },
    );
    const secondLoop: string[] = [];
    let stopAt = 0;
    let report;
    try {
      await kit.publish('drain-unstarted', 'a', 'b', 'c');
      await eventually(() => expect(firstLoop).toEqual(['a']));
      // b and c arrive in the loop's buffer while `a` holds its only slot.
      await eventually(async () => {
        const info = await kit.nats().jsm.consumers.info(STREAM, 'drain-unstarted');
        expect(info.num_ack_pending).toBe(3);
      });

      await kit.start('drain-unstarted', (msg) => {
        secondLoop.push(`${msg.string()}#${msg.info.deliveryCount}`);
      });

      stopAt = Date.now();
      const stopping = loop.stop({ deadline: stopAt + 5_000 });
      // Handed back while `a` still runs: the drain does not wait for the running handler to hand them back.
      await eventually(() => expect(secondLoop).toEqual(['b#2', 'c#2']), FAR_BELOW_ACK_WAIT_MS);
      expect(Date.now() - stopAt).toBeLessThan(FAR_BELOW_ACK_WAIT_MS);
      first.open();
      report = await stopping;
    } finally {
      first.open();
    }
    expect(report).toEqual({ finished: 1, handedBack: [], unstarted: 2 });
    expect(firstLoop).toEqual(['a']);
    await eventually(() => kit.settled('drain-unstarted'));
  });

  it('stop() twice drains once', async () => {
    const { loop } = await kit.start('drain-twice', () => undefined);
    const [first, second] = await Promise.all([loop.stop(), loop.stop({ deadline: Date.now() })]);
    expect(second).toBe(first);
  });
});
