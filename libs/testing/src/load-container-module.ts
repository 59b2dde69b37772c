/**
 * Imports a testcontainers package on first use, so the local path never loads it, and turns a load
 * failure into an error that says what to do: testcontainers 12 needs Node >= 22.22 (its undici 8 crashes
 * at import on Node 20).
 */
export async function loadContainerModule<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `Containers mode could not load ${name} on Node ${process.version} (${reason}); ` +
        'testcontainers 12 needs Node >= 22.22. Use DURA_TEST_INFRA=local with nats-server and Postgres installed.',
      { cause },
    );
  }
}
