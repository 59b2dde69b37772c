// The subscription bookkeeping of `dura mcp` over the SDK's in-memory transport, with the API's stream as a
// stream this test writes: a follower per uri, each event one notification, keepalives and `end` none, and
// the follower's request aborted on unsubscribe and on close. (mcp-server.e2e.spec.ts runs it on a stack.)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { DuraApiError, type DuraApi } from '../src/mcp/dura-api';
import { serveRunSubscriptions, sseFrames } from '../src/mcp/run-subscriptions';

interface Opened {
  runId: string;
  fromSeq: number;
  signal: AbortSignal;
  write(text: string): void;
}

async function connected() {
  const opened: Opened[] = [];
  const api = {
    getRun: (runId: string) =>
      runId === 'theirs'
        ? Promise.reject(new DuraApiError(404, 'run_not_found', `no run ${runId}`))
        : Promise.resolve({ runId, lastSeq: 41 }),
    stream: (runId: string, fromSeq: number, signal: AbortSignal) => {
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({ start: (c) => (controller = c) });
      signal.addEventListener('abort', () => controller.error(signal.reason), { once: true });
      const encoder = new TextEncoder();
      opened.push({ runId, fromSeq, signal, write: (text) => controller.enqueue(encoder.encode(text)) });
      return Promise.resolve(body);
    },
  } as unknown as DuraApi;
  const server = new McpServer(
    { name: 'dura', version: '0' },
    { capabilities: { resources: { subscribe: true } } },
  );
  serveRunSubscriptions(server, api);
  const client = new Client({ name: 't', version: '0' });
  const heard: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    heard.push(n.params.uri);
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  return { client, server, opened, heard };
}

const until = async (probe: () => boolean) => {
  for (let i = 0; i < 200 && !probe(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(probe()).toBe(true);
};

describe('dura mcp resource subscriptions', () => {
  it('follows from the next event, notifies each event once, and stops on unsubscribe', async () => {
    const { client, opened, heard } = await connected();
    await client.subscribeResource({ uri: 'dura://runs/r1' });
    await client.subscribeResource({ uri: 'dura://runs/r1' });
    expect(opened.map((o) => [o.runId, o.fromSeq])).toEqual([['r1', 42]]);
    const [stream] = opened;
    stream?.write(': keepalive\n\nid: 42\nevent: signal_received\ndata: {}\n\nid: 4');
    stream?.write('3\nevent: run_resumed\ndata: {}\n\n');
    await until(() => heard.length === 2);
    expect(heard).toEqual(['dura://runs/r1', 'dura://runs/r1']);
    await client.unsubscribeResource({ uri: 'dura://runs/r1' });
    expect(stream?.signal.aborted).toBe(true);
    await client.close();
  });

  it('stops every follower when the session closes, and refuses what the token cannot read', async () => {
    const { client, opened } = await connected();
    await client.subscribeResource({ uri: 'dura://runs/r1' });
    await client.subscribeResource({ uri: 'dura://runs/r2/events' });
    await expect(client.subscribeResource({ uri: 'dura://runs/theirs' })).rejects.toThrow(
      /run_not_found: no run theirs/,
    );
    await expect(client.subscribeResource({ uri: 'file:///etc/passwd' })).rejects.toThrow(/cannot subscribe/);
    expect(opened.map((o) => o.runId)).toEqual(['r1', 'r2']);
    await client.close();
    await until(() => opened.every((o) => o.signal.aborted));
  });
});

describe('sseFrames', () => {
  it('yields each event with its id, and no comment-only block', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        const e = new TextEncoder();
        c.enqueue(
          e.encode(': keepalive\r\n\r\nid: 7\r\nevent: run_completed\r\ndata: {}\r\n\r\nevent: end\n'),
        );
        c.enqueue(e.encode('data: {"status":"completed"}\n\n'));
        c.close();
      },
    });
    const frames = [];
    for await (const frame of sseFrames(body)) frames.push(frame);
    expect(frames).toEqual([
      { id: 7, event: 'run_completed' },
      { id: undefined, event: 'end' },
    ]);
  });
});
