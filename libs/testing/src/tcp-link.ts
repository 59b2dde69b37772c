// A network link between one client process and a server, on this machine and without root: a TCP relay the
// client connects to instead of the server. `cut()` partitions it as a dead network would: nothing gets
// through either way, open connections stay open (what was sent waits in the sockets' buffers, then in the
// peers' kernels, as packets a real partition drops would be retransmitted), and a new connection is held
// unanswered. `heal()` lets everything through again, in order.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpLink {
  /** `host:port` the client connects to instead of the server's. */
  readonly address: { host: string; port: number };
  /** The server's URL with its port replaced by the link's (`nats://127.0.0.1:4222` → `…:<link port>`). */
  urlFor(serverUrl: string): string;
  /** Nothing passes either way until `heal()`. */
  cut(): void;
  heal(): void;
  readonly isCut: boolean;
  /** Client connections open through the link now. */
  readonly connections: number;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  server: Socket | undefined;
  /** Bytes the client sent before its server connection was made. */
  early: Buffer[];
}

/** Starts a link to `target` on a free port of 127.0.0.1. */
export async function startTcpLink(target: { host: string; port: number }): Promise<TcpLink> {
  const pairs = new Set<Pair>();
  let cut = false;

  const openServerSide = (pair: Pair) => {
    const server = connect(target.port, target.host);
    pair.server = server;
    server.on('data', (chunk) => pair.client.write(chunk));
    server.on('error', () => pair.client.destroy());
    server.on('close', () => pair.client.destroy());
    for (const chunk of pair.early.splice(0)) server.write(chunk);
    if (cut) server.pause();
  };

  const listener: Server = createServer((client) => {
    const pair: Pair = { client, server: undefined, early: [] };
    pairs.add(pair);
    client.on('data', (chunk) => {
      if (pair.server) pair.server.write(chunk);
      else pair.early.push(chunk);
    });
    client.on('error', () => pair.server?.destroy());
    client.on('close', () => {
      pair.server?.destroy();
      pairs.delete(pair);
    });
    // A connection made while cut is held: its server side is opened on heal.
    if (cut) client.pause();
    else openServerSide(pair);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = listener.address() as AddressInfo;

  return {
    address: { host: '127.0.0.1', port },
    urlFor(serverUrl) {
      const url = new URL(serverUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString().replace(/\/$/, '');
    },
    cut() {
      cut = true;
      for (const pair of pairs) {
        pair.client.pause();
        pair.server?.pause();
      }
    },
    heal() {
      cut = false;
      for (const pair of pairs) {
        if (!pair.server) openServerSide(pair);
        pair.server?.resume();
        pair.client.resume();
      }
    },
    get isCut() {
      return cut;
    },
    get connections() {
      return pairs.size;
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server?.destroy();
      }
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
