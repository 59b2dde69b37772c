import { describe, expect, it } from 'vitest';
import { createGroupCommit } from '../src/group-commit';

/** A write whose batches the test releases one at a time. */
function heldWrites() {
  const batches: { items: readonly number[]; release: (fail?: Error) => void }[] = [];
  const write = (items: readonly number[]) =>
    new Promise<readonly string[]>((resolve, reject) => {
      batches.push({
        items,
        release: (fail) => (fail ? reject(fail) : resolve(items.map((n) => `done ${n}`))),
      });
    });
  return { batches, write };
}

describe('group commit', () => {
  it('writes the first item alone at once, and what arrives meanwhile together in the next batch', async () => {
    const { batches, write } = heldWrites();
    const commit = createGroupCommit(write, 10);
    const first = commit(1);
    const rest = [commit(2), commit(3), commit(4)];
    expect(batches.map((b) => b.items)).toEqual([[1]]);

    batches[0]!.release();
    expect(await first).toBe('done 1');
    await Promise.resolve();
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4]]);
    batches[1]!.release();
    expect(await Promise.all(rest)).toEqual(['done 2', 'done 3', 'done 4']);
  });

  it('keeps batches at the size limit', async () => {
    const { batches, write } = heldWrites();
    const commit = createGroupCommit(write, 2);
    const all = [1, 2, 3, 4, 5].map((n) => commit(n));
    for (let i = 0; i < 3; i += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      batches[i]!.release();
    }
    expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5].map((n) => `done ${n}`));
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('fails every item of a failed batch, and goes on with the next one', async () => {
    const { batches, write } = heldWrites();
    const commit = createGroupCommit(write, 10);
    const first = commit(1);
    const failing = [commit(2), commit(3)].map((p) => p.catch((err: Error) => err.message));
    batches[0]!.release();
    await first;
    await Promise.resolve();
    batches[1]!.release(new Error('connection lost'));
    expect(await Promise.all(failing)).toEqual(['connection lost', 'connection lost']);

    const later = commit(4);
    await Promise.resolve();
    batches[2]!.release();
    expect(await later).toBe('done 4');
  });
});
