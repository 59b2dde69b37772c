// N: what flow control adds to a model call. One admission (and its settle) timed with no limit declared,
// with a rate and a concurrency limit declared that never make a call wait (the shared KV record read and
// written with compare-and-set, the slot taken and given back), and the same with three replicas admitting
// at once (each its own NATS connection), where compare-and-set races cost retries.
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import type { ModelLimit } from '@dura/core';
import { createFlowControl, createFlowStore, type FlowControl } from '@dura/planner';
import { createLogger } from '@dura/service-kit';
import { startNatsServer } from '@dura/testing';
import type { BenchScenarios } from '../schema';
import { distribution } from '../stats';
import { lineJoinCost } from './line-join';

const MODEL = 'openai/bench-model';
/** Never binding: every call goes, so what is timed is admission itself. */
const LIMIT: ModelLimit = {
  model: MODEL,
  requestsPerMinute: 10_000_000,
  inputTokensPerMinute: 1_000_000_000,
  concurrentCalls: 100_000,
};

export async function admissionCost(sizes: {
  admissionCalls: number;
}): Promise<NonNullable<BenchScenarios['admission']>> {
  await using nats = await startNatsServer();
  const log = createLogger({ service: 'bench-admission', level: 'warn' });
  const connections = await Promise.all(
    [1, 2, 3].map((i) =>
      connect({ servers: nats.url, name: `dura-bench-admission-${i}`, noAsyncTraces: true }),
    ),
  );
  try {
    const replicas = (limits: ModelLimit[]): FlowControl[] =>
      connections.map((nc) =>
        createFlowControl({ store: createFlowStore({ js: jetstream(nc), log }), limits }),
      );
    const call = (i: number, prefix: string) => ({
      runId: `${prefix}-${i}`,
      decision: 0,
      tenant: `t${i % 5}`,
      model: MODEL,
      inputTokens: 400,
      outputTokens: 200,
    });
    const once = async (flow: FlowControl, i: number, prefix: string): Promise<number> => {
      const began = performance.now();
      const admission = await flow.admit(call(i, prefix));
      if (admission.kind !== 'go') throw new Error(`admission ${prefix}-${i} waited: ${admission.reason}`);
      await admission.settle({ inputTokens: 300, outputTokens: 100 });
      return performance.now() - began;
    };
    const [bare] = replicas([]);
    const [limited] = replicas([LIMIT]);
    // Warm-up: the KV bucket is created and the record exists before anything is timed.
    await once(limited!, -1, 'warm');
    const none: number[] = [];
    const one: number[] = [];
    for (let i = 0; i < sizes.admissionCalls; i += 1) {
      none.push(await once(bare!, i, 'none'));
      one.push(await once(limited!, i, 'one'));
    }
    const three = replicas([LIMIT]);
    const contended: number[] = [];
    const perReplica = Math.ceil(sizes.admissionCalls / 3);
    const began = performance.now();
    await Promise.all(
      three.map(async (flow, r) => {
        for (let i = 0; i < perReplica; i += 1) contended.push(await once(flow, r * perReplica + i, 'three'));
      }),
    );
    const wallMs = performance.now() - began;
    const lineJoin = await lineJoinCost(connections[0]!, log);
    return {
      mode: 'in-process',
      note:
        'admit + settle of one model call: no limit declared; a rate and a concurrency limit declared, one ' +
        'replica; the same limit with three replicas admitting at once (one caller each), on one nats-server; ' +
        'lineJoin: under 1 request/min, a line of 4,900 written as bench O leaves it, then 100 callers joining ' +
        'it one at a time (to 5,000), then 100 asking with it full',
      calls: sizes.admissionCalls,
      noLimitMs: distribution(none),
      oneReplicaMs: distribution(one),
      threeReplicasMs: distribution(contended),
      threeReplicasCallsPerSecond: Math.round((contended.length / wallMs) * 1000),
      lineJoin,
    };
  } finally {
    await Promise.all(connections.map((nc) => nc.close()));
  }
}
