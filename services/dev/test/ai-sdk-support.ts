// Shared by the ai-sdk-*.e2e.spec.ts files: the fake OpenAI and Anthropic providers the AI SDK agents of
// fixtures/ai-sdk-agents.ts shop with (one script for both wires), and the checks every run must pass.
import { fileURLToPath } from 'node:url';
import { beforeAll, expect } from 'vitest';
import type { RunEvent } from '@dura/contracts';
import { fold } from '@dura/core';
import { useFakeLlmServer, type FakeLlmReply, type FakeLlmServer } from '@dura/testing';
import { logOf, watchToEnd, type CrashSystem } from './crash-harness';
import { witnessedKeys } from './agent-support';
import { dura } from './system';

export const AISDK_AGENTS = fileURLToPath(new URL('./fixtures/ai-sdk-agents.ts', import.meta.url));
export const SHOPPERS = { openai: 'aisdk-openai-shopper', anthropic: 'aisdk-anthropic-shopper' } as const;
export type FakeLlmProvider = keyof typeof SHOPPERS;
/**
 * For every service of these tests: a charge may take 10 s before it times out (3 s by default), so a busy
 * machine does not turn a slow charge into a failed one (and pay.unsafe's into an operator wait).
 */
export const PATIENT_TOOLS_ENV = { WITNESS_TOOL_TIMEOUT_MS: '10000' };

/** The charges of each turn, by how many tool results the request carries: four answers, four charges. */
const TURNS: { name: string; amount: number }[][] = [
  [{ name: 'pay_charge', amount: 101 }],
  [
    { name: 'pay_checked', amount: 102 },
    { name: 'pay_unsafe', amount: 103 },
  ],
  [{ name: 'pay_charge', amount: 104 }],
];
export const CHARGES = TURNS.flat().map((c) => c.amount);
export const answerText = (runId: string) => `Bought everything for ${runId}, all four charges went through.`;

/** What a request asks, in either wire format: the run (from its first user text) and its turn (results so far). */
export function promptOf(body: unknown): { runId: string; turn: number } {
  const messages = (body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  const texts = (content: unknown): string[] =>
    typeof content === 'string'
      ? [content]
      : Array.isArray(content)
        ? content.flatMap((part: { type?: string; text?: string }) =>
            part.type === 'text' ? [part.text ?? ''] : [],
          )
        : [];
  const first = texts(messages.find((m) => m.role === 'user')?.content)[0] ?? '';
  const results = messages.reduce((n, m) => {
    if (m.role === 'tool') return n + 1;
    if (m.role === 'user' && Array.isArray(m.content))
      return n + m.content.filter((p: { type?: string }) => p.type === 'tool_result').length;
    return n;
  }, 0);
  // Turn n follows the results of turns 0..n-1: 1, 3, 4 results.
  const turn = [0, 1, 3, 4].indexOf(results);
  return { runId: first.replace(/^shop /, ''), turn };
}

export interface ShopModels {
  openai: FakeLlmServer;
  anthropic: FakeLlmServer;
  /** How often the fake of `provider` was asked turn `turn` of `runId`. */
  asked(provider: FakeLlmProvider, runId: string, turn: number): number;
  /** Streams the first answer to turn `turn` of `runId` a piece every `ms`, so a test can kill the caller mid-stream. */
  slow(runId: string, turn: number, ms: number): void;
  /** The planner/worker environment that points the agents at the fakes. */
  env(): Record<string, string>;
}

/** Registers beforeAll/afterAll (before useCrashSystem, so the URLs exist when the planner starts). */
export function useShopModels(): () => ShopModels {
  const slow = new Map<string, number>();
  let current: ShopModels | undefined;
  const respond = ({ body }: { body: unknown }): FakeLlmReply => {
    const { runId, turn } = promptOf(body);
    const ms = slow.get(`${runId}#${turn}`);
    slow.delete(`${runId}#${turn}`);
    const pace = ms === undefined ? {} : { pieceDelayMs: ms };
    const usage = { inputTokens: 40 + turn, outputTokens: 9 };
    if (turn === 3) return { kind: 'message', content: answerText(runId), usage, ...pace };
    const calls = TURNS[turn];
    if (!calls)
      return { kind: 'status', status: 400, body: { error: { message: `unexpected prompt for ${runId}` } } };
    const toolCalls = calls.map((c) => ({ name: c.name, arguments: { amount: c.amount } }));
    return { kind: 'message', content: `turn ${turn}`, toolCalls, usage, ...pace };
  };
  const openai = useFakeLlmServer({ provider: 'openai', respond });
  const anthropic = useFakeLlmServer({ provider: 'anthropic', respond });
  beforeAll(() => {
    current = {
      openai: openai(),
      anthropic: anthropic(),
      asked: (provider, runId, turn) =>
        (provider === 'openai' ? openai() : anthropic()).requests.filter((r) => {
          const p = promptOf(r.body);
          return p.runId === runId && p.turn === turn;
        }).length,
      slow: (runId, turn, ms) => slow.set(`${runId}#${turn}`, ms),
      env: () => ({
        DURA_AGENTS: AISDK_AGENTS,
        AISDK_OPENAI_URL: openai().url,
        AISDK_ANTHROPIC_URL: anthropic().url,
      }),
    };
  });
  return () => {
    if (!current) throw new Error('useShopModels(): only available inside tests, after beforeAll');
    return current;
  };
}

/**
 * The run completed with the model's answer after four turns; each charge made once at the witness under
 * its key and no other key of the run; every model answer in the log with its reservation before it; and
 * `dura replay` re-runs the code against the log without asking any model and finds no divergence.
 */
export async function expectShopped(sys: CrashSystem, runId: string): Promise<RunEvent[]> {
  const log = await watchToEnd(sys, runId, 180_000);
  // On a failure, what went wrong is in the failed calls and the waits: shown with the event types.
  const told = log.map((e) =>
    e.type === 'tool_call_failed' || e.type === 'wait_requested'
      ? `${e.type} ${JSON.stringify(e.data)}`
      : e.type,
  );
  expect(log.at(-1)?.type, told.join(', ')).toBe('run_completed');
  const state = fold(log);
  expect(state.output).toEqual({ text: answerText(runId), steps: 4 });
  const charges = log.flatMap((e) => (e.type === 'tool_call_requested' ? [e.data] : []));
  expect(charges.map((c) => c.args['amount'])).toEqual(CHARGES);
  for (const call of charges) expect(sys.witness.effects(call.idempotencyKey), call.tool).toBe(1);
  expect(witnessedKeys(sys, runId).sort()).toEqual(charges.map((c) => c.idempotencyKey).sort());
  expect(state.usage.inputTokens).toBe(40 + 41 + 42 + 43);
  expect(log.filter((e) => e.type === 'budget_reserved').length).toBeGreaterThanOrEqual(4);

  const replay = await dura(sys, ['replay', runId, '--agents', AISDK_AGENTS]);
  expect(replay.output).toContain(`no divergence (${(await logOf(sys, runId)).length} events checked)`);
  expect(replay.code).toBe(0);
  return log;
}
