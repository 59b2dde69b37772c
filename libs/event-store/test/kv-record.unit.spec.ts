import { describe, expect, it } from 'vitest';
import type { KV, KvEntry } from '@nats-io/kv';
import { JetStreamApiError } from '@nats-io/jetstream';
import { NoRespondersError, TimeoutError } from '@nats-io/nats-core';
import { createKvEntry, readKvRecord } from '../src/index';

/** Accepts `{n: number}`, as a record's schema would. */
const Schema = {
  safeParse: (value: unknown) =>
    typeof (value as { n?: unknown }).n === 'number'
      ? { success: true as const, data: value as { n: number } }
      : { success: false as const },
};
const entry = { operation: 'PUT', length: 7, revision: 3, json: () => ({ n: 1 }) } as unknown as KvEntry;

/** A bucket whose reads give `outcomes` in turn (an Error is thrown), counting the reads. */
function bucket(...outcomes: (KvEntry | null | Error)[]): KV & { reads: number } {
  const kv = {
    reads: 0,
    get: () => {
      const next = outcomes[kv.reads++];
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next ?? null);
    },
  };
  return kv as unknown as KV & { reads: number };
}

describe('readKvRecord', () => {
  it('sends a read nobody answered once more, and returns what the second read finds', async () => {
    const kv = bucket(new TimeoutError(), entry);
    expect(await readKvRecord(kv, 'k', Schema)).toEqual({ record: { n: 1 }, revision: 3 });
    expect(kv.reads).toBe(2);
  });

  it('gives up after a second unanswered read, with its error', async () => {
    const kv = bucket(new TimeoutError(), new TimeoutError());
    await expect(readKvRecord(kv, 'k', Schema)).rejects.toBeInstanceOf(TimeoutError);
    expect(kv.reads).toBe(2);
  });

  it('reads once when the answer is a refusal, and throws it', async () => {
    const kv = bucket(new Error('permissions violation'));
    await expect(readKvRecord(kv, 'k', Schema)).rejects.toThrow('permissions violation');
    expect(kv.reads).toBe(1);
  });
});

describe('createKvEntry', () => {
  const wrongLast = () =>
    new JetStreamApiError({ code: 400, err_code: 10071, description: 'wrong last sequence: 4' });
  const unanswered = () => new Error('jetstream is not enabled', { cause: new NoRespondersError('$KV.b.k') });

  /** A bucket whose writes give `puts` in turn (a number: the revision) and whose reads give `gets`. */
  function writable(puts: (number | Error)[], gets: (KvEntry | null | Error)[] = []) {
    const kv = {
      writes: [] as { previousSeq: number | undefined }[],
      reads: 0,
      put: (_key: string, _value: string, opts?: { previousSeq?: number }) => {
        const next = puts[kv.writes.length];
        kv.writes.push({ previousSeq: opts?.previousSeq });
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next ?? 0);
      },
      get: () => {
        const next = gets[kv.reads++];
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next ?? null);
      },
    };
    return kv as unknown as KV & typeof kv;
  }

  it('sends a write nobody answered again and never reads the key meanwhile (nats.js create read it and timed out)', async () => {
    const kv = writable([unanswered(), unanswered(), 7]);
    expect(await createKvEntry(kv, 'k', 'v')).toBe(7);
    expect(kv.writes).toEqual([{ previousSeq: 0 }, { previousSeq: 0 }, { previousSeq: 0 }]);
    expect(kv.reads).toBe(0);
  });

  it('writes over a delete marker at its revision', async () => {
    const marker = { operation: 'DEL', length: 0, revision: 5 } as unknown as KvEntry;
    const kv = writable([wrongLast(), 6], [new TimeoutError(), marker]);
    expect(await createKvEntry(kv, 'k', 'v')).toBe(6);
    expect(kv.writes).toEqual([{ previousSeq: 0 }, { previousSeq: 5 }]);
    expect(kv.reads).toBe(2);
  });

  it("takes newer servers' code for a held key (10164) as wrong last sequence", async () => {
    const marker = { operation: 'PURGE', length: 0, revision: 9 } as unknown as KvEntry;
    const newer = new JetStreamApiError({ code: 400, err_code: 10164, description: 'wrong last sequence' });
    const kv = writable([newer, 10], [marker]);
    expect(await createKvEntry(kv, 'k', 'v')).toBe(10);
    expect(kv.writes).toEqual([{ previousSeq: 0 }, { previousSeq: 9 }]);
  });

  it('refuses with wrong last sequence when the key holds a value, and passes any other refusal on', async () => {
    const held = writable([wrongLast()], [entry]);
    await expect(createKvEntry(held, 'k', 'v')).rejects.toMatchObject({ code: 10071 });
    expect(held.writes).toHaveLength(1);
    const denied = writable([new Error('permissions violation')]);
    await expect(createKvEntry(denied, 'k', 'v')).rejects.toThrow('permissions violation');
    expect(denied.reads).toBe(0);
  });
});
