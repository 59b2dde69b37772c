/**
 * Coalesces single writes into batches (group commit): a write issued while no batch is in flight goes out
 * at once, alone; writes issued while one is in flight wait for it and then go out together, in one
 * statement and one commit. An idle system pays no delay; a loaded one pays one round trip and one WAL
 * flush per batch instead of per write. A failed batch fails each of its writes.
 */
export function createGroupCommit<I, O>(
  write: (items: readonly I[]) => Promise<readonly O[]>,
  maxBatch: number,
): (item: I) => Promise<O> {
  const waiting: { item: I; resolve: (out: O) => void; reject: (err: unknown) => void }[] = [];
  let flushing = false;

  async function flush(): Promise<void> {
    flushing = true;
    while (waiting.length > 0) {
      const batch = waiting.splice(0, maxBatch);
      try {
        const results = await write(batch.map((entry) => entry.item));
        batch.forEach((entry, i) => entry.resolve(results[i] as O));
      } catch (err) {
        for (const entry of batch) entry.reject(err);
      }
    }
    flushing = false;
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!flushing) void flush();
    });
}
