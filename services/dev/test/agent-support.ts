// Shared by agent-parallel, agent-approval and agent-children: a fake OpenAI-compatible model that answers
// each run from its own script (runs are told apart by their input), the agents file the planner reads
// (DURA_AGENTS), and small readers of the log, the wire requests and the effect ledger.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { PLANNER_CONSUMERS } from '@dura/planner';
import { startFakeLlmServer, type FakeLlmReply, type FakeLlmServer } from '@dura/testing';
import type { CrashSystem, ServiceName } from './crash-harness';
import type { WireMessage } from './scripted-llm';
import { eventually } from './system';

export { untilLogged } from './crash-harness';
export { fakeModel, type WireMessage } from './scripted-llm';

/** A Chat Completions request as the planner sends it (its tools left untyped: tests say what they expect). */
export interface WireBody {
  model: string;
  messages: WireMessage[];
}

export type Script = (body: WireBody) => FakeLlmReply;

export interface AgentModel {
  /** The fake server's `/v1` URL, for the agents' `model.baseUrl`. */
  readonly url: string;
  /** The agents file the planner is started with. */
  readonly agentsPath: string;
  /** Answers every request of the run whose input is `input` with `script`. */
  script(input: string, script: Script): void;
  /** The requests of that run, in order. */
  requestsFor(input: string): WireBody[];
}

const inputOf = (body: WireBody) => body.messages.find((m) => m.role === 'user')?.content;

/**
 * Registers beforeAll/afterAll (call it before useCrashSystem, so the file exists when the planner starts):
 * a fake model answering per run, and the agents file `agents(url)` written where `agentsPath` says.
 */
export function useAgentModel(agents: (url: string) => unknown): () => AgentModel {
  let server: FakeLlmServer | undefined;
  let dir: string | undefined;
  let current: AgentModel | undefined;
  const scripts = new Map<string, Script>();
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dura-agents-'));
    server = await startFakeLlmServer({
      provider: 'openai',
      respond: ({ body }) => {
        const script = scripts.get(inputOf(body as WireBody) ?? '');
        if (script) return script(body as WireBody);
        return { kind: 'status', status: 400, body: { error: { message: 'no script for this run' } } };
      },
    });
    const agentsPath = join(dir, 'agents.json');
    await writeFile(agentsPath, JSON.stringify(agents(server.url), null, 2));
    const s = server;
    current = {
      url: s.url,
      agentsPath,
      script: (input, script) => scripts.set(input, script),
      requestsFor: (input) =>
        s.requests.map((r) => r.body as WireBody).filter((body) => inputOf(body) === input),
    };
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!current) throw new Error('useAgentModel(): only available inside tests, after beforeAll');
    return current;
  };
}

export const toolMessages = (body: WireBody): WireMessage[] => body.messages.filter((m) => m.role === 'tool');

/** SIGKILLs the current process of `name` now and proves it died of it. */
export async function killNow(sys: CrashSystem, name: ServiceName): Promise<void> {
  const proc = sys.proc(name);
  await proc.kill('SIGKILL');
  expect((await proc.exited).signal).toBe('SIGKILL');
}

export const typesOf = (log: readonly RunEvent[]) => log.map((e) => e.type);

export const count = (log: readonly RunEvent[], type: RunEvent['type']) =>
  log.filter((e) => e.type === type).length;

/** The run's rows in the gateway's effect ledger: what was ever handed to a tool. */
export async function ledgerOf(sys: CrashSystem, runId: string) {
  return sys.system.sql<{ idempotency_key: string; tool: string; status: string; attempts: number }[]>`
    select idempotency_key, tool, status, attempts from effects where run_id = ${runId} order by step`;
}

/** Keys of the run that reached the payment witness. */
export const witnessedKeys = (sys: CrashSystem, runId: string) =>
  sys.witness.keys().filter((key) => key.startsWith(`${runId}:`));

/**
 * Waits until the planner has settled every message it was handed (the killed process's unacknowledged ones
 * come back after the ack wait): after this, whatever it does next was caused by what the test sends.
 */
export function plannerCaughtUp(sys: CrashSystem, timeoutMs = 20_000): Promise<true> {
  const { intake, decide, signals } = PLANNER_CONSUMERS;
  return eventually(
    async () => {
      for (const { stream, durable } of [intake, decide, signals]) {
        const info = await sys.system.jsm.consumers.info(stream, durable);
        if (info.num_ack_pending > 0 || info.num_pending > 0) return undefined;
      }
      return true as const;
    },
    'the planner to settle the messages it was handed',
    timeoutMs,
  );
}
