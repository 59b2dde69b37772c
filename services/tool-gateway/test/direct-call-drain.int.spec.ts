// A gateway's door for direct calls at a drain's deadline: a call still running is answered `failed` (its
// planner sends it as a tool task) and its planner hears nothing more of it, though the call runs on here.
// Its own file: no other gateway may share the queue group the request goes to.
import { describe, expect, it, vi } from 'vitest';
import { createInbox, headers as natsHeaders } from '@nats-io/nats-core';
import {
  DIRECT_CALL_HEADERS,
  directCallReplyOf,
  directCallSubject,
  type DirectCallReply,
} from '@dura/contracts';
import { testLogger } from '@dura/service-kit/testing';
import { useTestInfra } from '@dura/testing';
import { serveDirectCalls } from '../src/direct-calls';
import type { LocalCallOutcome } from '../src/in-place-calls';
import { useConnections } from './gateway-harness';
import { toolTask } from './support';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const infra = useTestInfra();
const conns = useConnections(infra);

describe('a direct call still running at the drain deadline', () => {
  it('is answered failed and handed back, and no `working` follows while it runs on', async () => {
    const { nc } = conns.setup;
    let finish: (outcome: LocalCallOutcome) => void = () => undefined;
    const finished = new Promise<LocalCallOutcome>((resolve) => (finish = resolve));
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (started = resolve));
    const door = serveDirectCalls({
      nc,
      local: {
        runs: () => true,
        run: () => {
          started();
          return finished;
        },
      },
      log: testLogger('tool-gateway'),
      maxInFlight: 4,
      workingEveryMs: 50,
    });
    await door.ready;

    const replies: DirectCallReply[] = [];
    const inbox = createInbox();
    const sub = nc.subscribe(inbox, {
      callback: (err, msg) => {
        if (err) return;
        const read = directCallReplyOf((name) => msg.headers?.get(name) || undefined, msg.data);
        replies.push(read.ok ? read.reply : { kind: 'failed', reason: read.problem });
      },
    });
    const task = toolTask('direct-drain', 'test.slow', { ms: 1 });
    const headers = natsHeaders();
    headers.set(DIRECT_CALL_HEADERS.fresh, 'true');
    nc.publish(directCallSubject(task.tool), JSON.stringify(task), { reply: inbox, headers });
    await running;
    await vi.waitUntil(() => replies.some((r) => r.kind === 'working'), { timeout: 10_000 });

    const handedBack = await door.stop({ deadline: Date.now() });
    expect(handedBack).toEqual([task]);
    await vi.waitUntil(() => replies.some((r) => r.kind === 'failed'), { timeout: 10_000 });
    const toldFailed = replies.length;

    // The call runs on for ten `working` periods, then ends: its planner hears nothing more of it. (An absence
    // needs a window: ten periods, then a round trip through the server, so that anything sent has arrived.)
    await new Promise<void>((resolve) => setTimeout(resolve, 10 * 50));
    finish({});
    await finished;
    await nc.flush();
    sub.unsubscribe();
    expect(replies.slice(toldFailed - 1)).toEqual([
      { kind: 'failed', reason: 'the gateway stopped before the call finished' },
    ]);
  });
});
