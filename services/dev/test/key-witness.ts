// The witness of concurrency keys: the `key.hold` tool (fixtures/key-witness-tools.ts) tells it when a step
// of a key begins and ends; it counts, per key, the steps inside at once.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface KeyWitness {
  url: string;
  /** Per key, the most steps that were inside at once. */
  maxInside(key: string): number | undefined;
  /** Per key, the calls (idempotency keys) that entered. */
  entered(key: string): Set<string>;
  close(): Promise<void>;
}

export async function startKeyWitness(): Promise<KeyWitness> {
  const inside = new Map<string, number>();
  const most = new Map<string, number>();
  const calls = new Map<string, Set<string>>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://witness');
    const key = url.searchParams.get('key') ?? '';
    const entering = url.pathname === '/enter';
    const now = (inside.get(key) ?? 0) + (entering ? 1 : -1);
    inside.set(key, now);
    most.set(key, Math.max(most.get(key) ?? 0, now));
    if (entering) {
      const seen = calls.get(key) ?? new Set<string>();
      seen.add(url.searchParams.get('call') ?? '');
      calls.set(key, seen);
    }
    res.writeHead(200).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    maxInside: (key) => most.get(key),
    entered: (key) => calls.get(key) ?? new Set(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
