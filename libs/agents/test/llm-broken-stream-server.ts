import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How one answer of the broken-stream server goes: it writes `chunks` as an SSE body, then `end`s it cleanly,
 * `cut`s the connection (socket destroyed mid-body), or `stall`s with the connection open.
 */
export interface BrokenStreamReply {
  chunks: string[];
  then: 'end' | 'cut' | 'stall';
}

export interface BrokenStreamServer extends AsyncDisposable {
  /** The origin; OpenAI adapters take `${url}/v1`. */
  readonly url: string;
  /** Requests received, in order: their lower-case headers. */
  readonly requests: Record<string, string | string[] | undefined>[];
}

/**
 * A provider on 127.0.0.1 whose streamed answers break the way networks and proxies break them, which the
 * well-behaved fake provider of `@dura/testing` never does. `replies[i]` answers request `i`; the last repeats.
 */
export async function startBrokenStreamServer(replies: BrokenStreamReply[]): Promise<BrokenStreamServer> {
  const requests: BrokenStreamServer['requests'] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const index = requests.push(req.headers) - 1;
      const reply = replies[Math.min(index, replies.length - 1)]!;
      open.add(res);
      res.on('close', () => open.delete(res));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const chunk of reply.chunks) res.write(chunk);
      if (reply.then === 'end') res.end();
      // Once the written bytes have left, the socket goes, as when a proxy drops a connection.
      if (reply.then === 'cut') res.write('', () => res.destroy());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const res of open) res.destroy();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url: `http://127.0.0.1:${port}`, requests, [Symbol.asyncDispose]: close };
}

/** One SSE event as the providers write it. */
export function sseEvent(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}
