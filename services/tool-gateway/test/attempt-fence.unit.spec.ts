import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { TASK_VERSION, type ToolTask } from '@dura/contracts';
import { RetryLater } from '@dura/service-kit';
import { defineTool } from '@dura/tools';
import { createAttempts } from '../src/attempt';
import type { CallRoute } from '../src/call-route';
import type { Cancellations } from '../src/cancellations';
import type { EffectLedger } from '../src/effect-ledger';
import { createGatewayMetrics } from '../src/gateway-metrics';
import type { ResultObservations } from '../src/result-observations';
import type { SecretCalls } from '../src/secret-calls';

// The lease fence of a claimed attempt, without I/O: the ports an attempt waits on are in-memory here, so a
// test can say how long the cancellation read takes (a NATS server restarting makes it take seconds).

const MARGIN_MS = 40;
/** A margin nothing on a loaded machine outlasts: the attempt must go ahead. */
const WIDE_MARGIN_MS = 60_000;

const task: ToolTask = {
  v: TASK_VERSION,
  runId: 'run-fence',
  callId: 'call-1',
  step: 1,
  tool: 'test.charge',
  args: {},
  idempotencyKey: 'run-fence:1:test.charge',
  causationId: 'run-fence@1',
  correlationId: 'run-fence',
};

function attemptsWith(cancellationReadMs: number, leaseMarginMs: number) {
  const effects: number[] = [];
  const tool = defineTool({
    name: 'test.charge',
    description: 'counts its effects',
    input: z.object({}),
    safety: 'idempotent',
    execute: (_args, ctx) => {
      effects.push(ctx.attempt);
      return Promise.resolve({ charged: true });
    },
  });
  const recorded: string[] = [];
  const cancellations = {
    register: () => ({ signal: new AbortController().signal, release: () => undefined }),
    check: () => new Promise((resolve) => setTimeout(() => resolve(undefined), cancellationReadMs)),
    delivered: () => undefined,
  } as unknown as Cancellations;
  const ledger = {
    finish: (key: string) => {
      recorded.push(key);
      return Promise.resolve({ conflict: false, fenced: false });
    },
  } as unknown as EffectLedger;
  const observations = {
    completed: () => Promise.resolve({}),
    storeBytes: undefined,
  } as unknown as ResultObservations;
  const secretCalls = {
    opened: (t: ToolTask) => t,
    sealedResult: (_t: ToolTask, result: unknown) => result,
  } as unknown as SecretCalls;
  const attempts = createAttempts({
    ledger,
    observations,
    secretCalls,
    cancellations,
    clock: () => new Date(),
    maxAttempts: 3,
    leaseMarginMs,
    metrics: createGatewayMetrics(),
  });
  const route: CallRoute = { readCancellation: true, deliver: () => Promise.resolve() };
  return {
    run: () => attempts.execute(task, tool, 1, route, { claimedAt: performance.now() }),
    effects,
    recorded,
  };
}

describe('a claimed attempt re-checks its lease right before the effect', () => {
  it('does not start the effect when the cancellation read outlasted the lease margin', async () => {
    const { run, effects, recorded } = attemptsWith(MARGIN_MS * 5, MARGIN_MS);
    const error = await run().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(RetryLater);
    expect((error as Error).message).toMatch(
      /more than the lease margin \(40 ms\): its effect is not started/,
    );
    // Another replica may hold the call by now: this one neither charged nor recorded anything.
    expect(effects).toEqual([]);
    expect(recorded).toEqual([]);
  });

  it('starts the effect and records it when the read was quick', async () => {
    const { run, effects, recorded } = attemptsWith(0, WIDE_MARGIN_MS);
    await expect(run()).resolves.toBe(true);
    expect(effects).toEqual([1]);
    expect(recorded).toEqual([task.idempotencyKey]);
  });
});
