import type { JetStreamManager } from '@nats-io/jetstream';
import { NoRespondersError } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { runSubject } from '@dura/contracts';
import {
  createRunReader,
  followRun,
  type RunReader,
  type RunWakeups,
  type StoredRunMessage,
} from '../src/index';

const RUN = 'run-a';
const subject = runSubject(RUN);
const msg = (seq: number): StoredRunMessage => ({ seq, subject, data: new Uint8Array([seq]) });

/** A stream whose leader holds `leader` and whose replica holds only the seqs up to `replicaUpTo`. */
function laggingStream(leader: number[], replicaUpTo: () => number) {
  const asked: { leader: boolean; seq: number }[] = [];
  const first = (seqs: number[], from: number) => seqs.find((s) => s >= from);
  const reader: RunReader = {
    next(_runId, seq, options) {
      asked.push({ leader: options?.leader === true, seq });
      const held = options?.leader ? leader : leader.filter((s) => s <= replicaUpTo());
      const found = first(held, seq);
      return Promise.resolve(found === undefined ? null : msg(found));
    },
    lastSeq: () => Promise.resolve(leader.at(-1) ?? 0),
    readAll: () => Promise.reject(new Error('not used')),
  };
  return { reader, asked };
}

/** Wake-ups a test fires by hand. */
function manualWakeups() {
  let wake: (() => void) | undefined;
  const wakeups: RunWakeups = {
    open: () => ({
      wait: (timeoutMs, signal) =>
        new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), timeoutMs);
          wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
          signal?.addEventListener('abort', () => resolve(false), { once: true });
        }),
      close: () => undefined,
    }),
    subscribed: () => 0,
    close: () => undefined,
  };
  return { wakeups, fire: () => wake?.() };
}

async function take(gen: AsyncGenerator<StoredRunMessage>, n: number): Promise<number[]> {
  const seqs: number[] = [];
  for await (const m of gen) {
    seqs.push(m.seq);
    if (seqs.length === n) break;
  }
  return seqs;
}

describe('followRun', () => {
  it('yields every message once, in order, when the replica answering lags behind the leader', async () => {
    const leader = [3, 7, 8, 12];
    let replica = 3;
    const { reader, asked } = laggingStream(leader, () => replica);
    const { wakeups } = manualWakeups();
    // The replica catches up a little with every read: the follower must wait for it, never skip ahead.
    const catchingUp: RunReader = {
      ...reader,
      next: async (runId, seq, options) => {
        const answer = await reader.next(runId, seq, options);
        replica += 2;
        return answer;
      },
    };
    const seqs = await take(
      followRun({ reader: catchingUp, wakeups }, RUN, { fromSeq: 1, pollMs: 60_000 }),
      4,
    );
    expect(seqs).toEqual([3, 7, 8, 12]);
    expect(asked.some((a) => !a.leader)).toBe(true);
  });

  it('asks the leader when the replica still has nothing after the re-reads that follow a wake-up', async () => {
    const { reader, asked } = laggingStream([5], () => 0);
    const { wakeups } = manualWakeups();
    const seqs = await take(followRun({ reader, wakeups }, RUN, { fromSeq: 1, pollMs: 60_000 }), 1);
    expect(seqs).toEqual([5]);
    expect(asked.at(-1)).toEqual({ leader: true, seq: 1 });
  });

  it('a wake-up that comes before the message is readable is followed by re-reads until it is', async () => {
    const leader: number[] = [1];
    const { reader } = laggingStream(leader, () => Number.MAX_SAFE_INTEGER);
    const { wakeups, fire } = manualWakeups();
    const follow = followRun({ reader, wakeups }, RUN, { fromSeq: 1, pollMs: 60_000 });
    expect((await follow.next()).value?.seq).toBe(1);
    const second = follow.next();
    // Let the follower drain its re-reads and wait; wake it, and store the message only 60 ms later.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    fire();
    setTimeout(() => leader.push(4), 60);
    expect((await second).value?.seq).toBe(4);
    await follow.return(undefined);
  });

  it('ends when the signal aborts while it waits', async () => {
    const { reader } = laggingStream([], () => 0);
    const { wakeups } = manualWakeups();
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    const started = Date.now();
    const seqs = await take(followRun({ reader, wakeups }, RUN, { fromSeq: 1, signal: abort.signal }), 1);
    expect(seqs).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('RunReader.readAll', () => {
  /** A manager whose direct gets come from a replica holding `replica`, its leader holding `leader`. */
  function manager(leader: number[], replica: number[] | 'no-direct') {
    const calls = { direct: 0, leader: 0 };
    const found = (seqs: number[], from: number) => {
      const seq = seqs.find((s) => s >= from);
      return seq === undefined ? null : { seq, subject, data: new Uint8Array([seq]), header: undefined };
    };
    const jsm = {
      streams: {
        getMessage: (
          _stream: string,
          query: { next_by_subj?: string; seq?: number; last_by_subj?: string },
        ) => {
          calls.leader += 1;
          if (query.last_by_subj) return Promise.resolve(found([...leader].reverse(), 0) ?? null);
          return Promise.resolve(found(leader, query.seq ?? 1));
        },
      },
      direct: {
        getMessage: (_stream: string, query: { seq: number }) => {
          calls.direct += 1;
          if (replica === 'no-direct') return Promise.reject(new NoRespondersError('$JS.API.DIRECT.GET'));
          return Promise.resolve(found(replica, query.seq));
        },
      },
    };
    return { jsm: jsm as unknown as JetStreamManager, calls };
  }

  it('reads through the leader last seq it saw at the start, asking the leader what a lagging replica lacks', async () => {
    const { jsm, calls } = manager([2, 4, 9], [2, 4]);
    const read = await createRunReader(jsm).readAll(RUN, 1);
    expect(read.map((m) => m.seq)).toEqual([2, 4, 9]);
    expect(calls.direct).toBe(3);
  });

  it('falls back to the leader for good when the stream answers no direct get', async () => {
    const { jsm, calls } = manager([2, 4, 9], 'no-direct');
    const reader = createRunReader(jsm);
    expect((await reader.readAll(RUN, 3)).map((m) => m.seq)).toEqual([4, 9]);
    expect(calls.direct).toBe(1);
  });
});
