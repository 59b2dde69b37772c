import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpLink, type TcpLink } from '../src/tcp-link';

/** What a socket has received so far, and a wait for a given text to have arrived. */
function received(socket: Socket) {
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  return {
    text: () => text,
    async until(expected: string, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!text.includes(expected)) {
        if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for "${expected}", got "${text}"`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}

describe('a TCP link a test can cut', () => {
  const server = createServer((socket) => socket.pipe(socket));
  let link: TcpLink;

  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    link = await startTcpLink({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  });
  afterAll(async () => {
    await link.close();
    server.close();
  });

  it('passes bytes both ways until cut, holds them while cut, delivers them in order once healed', async () => {
    const client = connect(link.address.port, '127.0.0.1');
    await once(client, 'connect');
    const got = received(client);
    client.write('one;');
    await got.until('one;');
    link.cut();
    expect(link.isCut).toBe(true);
    client.write('two;');
    client.write('three;');
    // Absence needs a window: nothing may get through while the link is cut.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(got.text()).toBe('one;');
    link.heal();
    await got.until('one;two;three;');
    client.destroy();
  });

  it('holds a connection made while cut unanswered, and opens it on heal', async () => {
    link.cut();
    const client = connect(link.address.port, '127.0.0.1');
    await once(client, 'connect');
    const got = received(client);
    client.write('early;');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(got.text()).toBe('');
    expect(link.connections).toBeGreaterThanOrEqual(1);
    link.heal();
    await got.until('early;');
    client.destroy();
  });

  it('rewrites a server URL to go through the link', () => {
    expect(link.urlFor('nats://127.0.0.1:4222')).toBe(`nats://127.0.0.1:${link.address.port}`);
  });
});
