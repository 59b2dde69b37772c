// Shared by the crash-*.e2e.spec.ts files: the three services as separate processes, the payment witness
// they charge through, and the checks every crash point must pass once the crashed service is back.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { createDuraClient, type SubmitRunInput } from '@dura/client';
import type { RunEvent } from '@dura/contracts';
import { fold, idempotencyKey } from '@dura/core';
import { createEventStore } from '@dura/event-store';
import type { FailpointName } from '@dura/service-kit';
import {
  startPaymentWitness,
  useTestInfra,
  type ManagedProcess,
  type PaymentWitness,
  type ProcessExit,
} from '@dura/testing';
import { eventually, getJson, openSystem, startService, type SystemHandles } from './system';

export type ServiceName = 'planner' | 'tool-gateway' | 'projector' | 'worker';
/** `DURA_FAILPOINT`: a point's name, or `name:N` to fire at its N-th hit. */
export type FailpointSpec = FailpointName | `${FailpointName}:${number}`;

export const WITNESS_TOOLS = fileURLToPath(new URL('./fixtures/witness-tools.ts', import.meta.url));

// Short enough that a killed consumer's message comes back within seconds, long enough (heartbeats every
// ackWait/2) that a live handler never loses its message, which would ask the model twice.
const FAST_RECOVERY_ENV = {
  PLANNER_ACK_WAIT_MS: '3000',
  GATEWAY_ACK_WAIT_MS: '3000',
  // A crashed call's lease is the tool's timeoutMs (3 s for the witness tools) plus this margin.
  GATEWAY_LEASE_MARGIN_MS: '1000',
};

/** A scripted run request with its run id fixed, so a test knows its keys before submitting. */
export type PlanRequest = SubmitRunInput & { runId: string };

/** Five charges, alternating pay.checked (settled by status look-up) and pay.charge (re-run by key). */
export function paymentPlan(runId: string): PlanRequest {
  const tools = ['pay.checked', 'pay.charge', 'pay.checked', 'pay.charge', 'pay.checked'];
  return {
    runId,
    agent: {
      kind: 'scripted',
      steps: tools.map((tool, i) => ({ tool, args: { amount: (i + 1) * 100 } })),
    },
  };
}

/** The idempotency key of step `step` (from 1) of a plan, as the planner derives it. */
export function keyOf(request: PlanRequest, step: number): string {
  const planned = request.agent.kind === 'scripted' ? request.agent.steps[step - 1] : undefined;
  if (!planned) throw new Error(`the plan has no step ${step}`);
  return idempotencyKey({ runId: request.runId, step, tool: planned.tool, args: planned.args });
}

/** The run's log, read straight from the stream. */
export function logOf(sys: CrashSystem, runId: string): Promise<RunEvent[]> {
  return createEventStore(sys.system).read(runId);
}

export interface ModelCallEntry {
  runId: string;
  step: number;
  decisions: number;
  lastSeq: number;
}

export interface CrashSystem {
  system: SystemHandles;
  witness: PaymentWitness;
  /**
   * Starts `name` (stopping a running instance first), with `DURA_FAILPOINT=failpoint` when given and `env`
   * on top of the system's environment.
   */
  restart(
    name: ServiceName,
    failpoint?: FailpointSpec,
    env?: Record<string, string>,
  ): Promise<ManagedProcess>;
  /** Starts one more instance of `name` beside the tracked one (a second replica); stopped after the file. */
  startExtra(name: ServiceName, env?: Record<string, string>): Promise<ManagedProcess>;
  /** The current process of `name`. */
  proc(name: ServiceName): ManagedProcess;
  /** Waits for the current process of `name` to exit on its own. */
  exitOf(name: ServiceName, timeoutMs?: number): Promise<ProcessExit>;
  submit(request: PlanRequest): Promise<void>;
  modelCalls(runId: string): Promise<ModelCallEntry[]>;
}

/** Registers beforeAll/afterAll: own NATS + database (useTestInfra), witness, and `initial` services running. */
export interface CrashSystemOptions {
  /** More environment for a service, read each time it starts (e.g. DURA_AGENTS pointing at a test server). */
  env?: (name: ServiceName) => Record<string, string>;
}

export function useCrashSystem(
  initial: readonly ServiceName[],
  options: CrashSystemOptions = {},
): () => CrashSystem {
  const infra = useTestInfra();
  const running = new Map<ServiceName, ManagedProcess>();
  const all: ManagedProcess[] = [];
  let current: CrashSystem | undefined;
  let witness: PaymentWitness | undefined;
  let system: SystemHandles | undefined;
  let logDir: string | undefined;

  beforeAll(async () => {
    system = await openSystem(infra().nats.url, infra().db.url);
    witness = await startPaymentWitness();
    logDir = await mkdtemp(join(tmpdir(), 'dura-crash-'));
    const modelLog = join(logDir, 'model-calls.jsonl');
    const env = (name: ServiceName, failpoint: string | undefined): Record<string, string> => ({
      ...system!.env,
      ...FAST_RECOVERY_ENV,
      DURA_TOOLS_MODULES: WITNESS_TOOLS,
      WITNESS_URL: witness!.url,
      ...(name === 'planner' || name === 'worker' ? { DURA_SCRIPTED_MODEL_LOG: modelLog } : {}),
      ...(failpoint ? { DURA_FAILPOINT: failpoint } : {}),
      ...options.env?.(name),
    });
    const restart: CrashSystem['restart'] = async (name, failpoint, extra = {}) => {
      await running.get(name)?.kill('SIGTERM');
      const proc = await startService(name, { ...env(name, failpoint), ...extra });
      running.set(name, proc);
      all.push(proc);
      return proc;
    };
    const startExtra: CrashSystem['startExtra'] = async (name, extra = {}) => {
      const proc = await startService(name, { ...env(name, undefined), ...extra });
      all.push(proc);
      return proc;
    };
    const proc = (name: ServiceName): ManagedProcess => {
      const found = running.get(name);
      if (!found) throw new Error(`${name} was never started`);
      return found;
    };
    const client = createDuraClient(system);
    current = {
      system,
      witness,
      restart,
      startExtra,
      proc,
      exitOf: (name, timeoutMs = 30_000) => exitWithin(proc(name), timeoutMs),
      submit: async (request) => {
        await client.submitRun(request);
      },
      modelCalls: async (runId) => {
        const text = await readFile(modelLog, 'utf8').catch(() => '');
        return text
          .split('\n')
          .filter((line) => line.trim().length > 0)
          .map((line) => JSON.parse(line) as ModelCallEntry)
          .filter((entry) => entry.runId === runId);
      },
    };
    for (const name of initial) await restart(name);
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(all.map((proc) => proc.kill('SIGTERM')));
    await Promise.allSettled([system?.close(), witness?.close()]);
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  return () => {
    if (!current) throw new Error('useCrashSystem(): only available inside tests, after beforeAll');
    return current;
  };
}

async function exitWithin(proc: ManagedProcess, timeoutMs: number): Promise<ProcessExit> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `${proc.name} did not exit within ${timeoutMs} ms. Output tail:\n${proc.output().slice(-3000)}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([proc.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Follows the run with the client SDK until its terminal event, or until `timeoutMs` passes. */
export async function watchToEnd(sys: CrashSystem, runId: string, timeoutMs = 60_000): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  const signal = AbortSignal.timeout(timeoutMs);
  for await (const event of createDuraClient(sys.system).watchRun(runId, { signal })) events.push(event);
  return events;
}

/** Waits until the run's log holds an event matching `pred`; returns the log. */
export function untilLogged(
  sys: CrashSystem,
  runId: string,
  pred: (event: RunEvent) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<RunEvent[]> {
  return eventually(
    async () => {
      const log = await logOf(sys, runId);
      return log.some(pred) ? log : undefined;
    },
    `${runId}: ${what}`,
    timeoutMs,
  );
}

/** Waits for `name` to die at `failpoint` and proves it was a SIGKILL there, not some other exit. */
export async function expectKilledAt(
  sys: CrashSystem,
  name: ServiceName,
  failpoint: FailpointSpec,
): Promise<void> {
  const exit = await sys.exitOf(name);
  const output = sys.proc(name).output();
  expect(exit.signal, output.slice(-3000)).toBe('SIGKILL');
  expect(output).toContain(`failpoint ${failpoint.split(':')[0]} reached`);
}

/**
 * The crash-point contract (DESIGN "Crash points the tests must cover"): the run completes; each key charged
 * exactly once at the witness, and a pay.checked key asked exactly once; every requested key reached the
 * witness and no other key of this run did; the projection equals the fold of the log; and no recorded model
 * decision was asked again: each decision number once, except `repeatedDecision` (answered, never recorded).
 */
export async function expectRecovered(
  sys: CrashSystem,
  runId: string,
  options: { steps: number; repeatedDecision?: number },
): Promise<RunEvent[]> {
  const watched = await watchToEnd(sys, runId);
  const types = watched.map((e) => e.type);
  expect(types.at(-1), `the run completes; its log: ${types.join(', ')}`).toBe('run_completed');
  const log = await logOf(sys, runId);
  expect(log).toEqual(watched);
  const state = fold(log);
  expect(state.status).toBe('completed');

  const requested = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
  expect(requested).toHaveLength(options.steps);
  for (const call of requested) {
    const key = call.idempotencyKey;
    expect(sys.witness.effects(key), `effects of ${key}`).toBe(1);
    if (call.tool === 'pay.checked') expect(sys.witness.requests(key), `requests of ${key}`).toBe(1);
  }
  const witnessed = sys.witness.keys().filter((key) => key.startsWith(`${runId}:`));
  expect(witnessed.sort()).toEqual(requested.map((c) => c.idempotencyKey).sort());
  const observed = log.flatMap((e) => (e.type === 'tool_call_completed' ? [e.data.callId] : []));
  expect(observed, 'one observation per call').toEqual(requested.map((c) => c.callId));

  const projected = await eventually(
    async () => {
      const { status, body } = await getJson(`${sys.system.apiUrl}/runs/${runId}`);
      return status === 200 && (body as { lastSeq: number }).lastSeq === state.lastSeq ? body : undefined;
    },
    `the projection of ${runId} to reach seq ${state.lastSeq}`,
    30_000,
  );
  expect(projected).toEqual(JSON.parse(JSON.stringify(state)));
  const { body: page } = await getJson(`${sys.system.apiUrl}/runs/${runId}/events?limit=1000`);
  expect((page as { events: RunEvent[] }).events).toEqual(JSON.parse(JSON.stringify(log)));

  const asked = new Map<number, number>();
  for (const call of await sys.modelCalls(runId))
    asked.set(call.decisions, (asked.get(call.decisions) ?? 0) + 1);
  const expected = new Map(
    Array.from({ length: state.decisions }, (_, d) => [d, d === options.repeatedDecision ? 2 : 1] as const),
  );
  expect(Object.fromEntries(asked), 'model calls per decision number').toEqual(Object.fromEntries(expected));
  return log;
}
