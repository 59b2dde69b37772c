// Shared by the agent-*.e2e.spec.ts files: a fake OpenAI-compatible model that answers each run from its own
// script (runs are told apart by their input), agents files on disk for the planner processes, and readers
// of the wire requests the planner sent.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { startFakeLlmServer, type FakeLlmReply, type FakeLlmServer } from '@dura/testing';
import { WITNESS_TOOLS } from './crash-harness';

export const AGENT2_TOOLS = fileURLToPath(new URL('./agent2-tools.ts', import.meta.url));
/** Every service loads the witness tools and `report.fetch`. */
export const AGENT_TOOLS_ENV = { DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${AGENT2_TOOLS}` };

/** A Chat Completions message as the planner sends it. */
export interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

export interface WireBody {
  model: string;
  messages: WireMessage[];
  tools?: unknown[];
}

export const bodyOf = (request: { body: unknown }): WireBody => request.body as WireBody;

export function systemOf(body: WireBody): string {
  return body.messages.find((m) => m.role === 'system')?.content ?? '';
}

/** The planner's request for a summary of older steps (no tools, the compression prompt). */
export function isSummarization(body: WireBody): boolean {
  return (body.tools ?? []).length === 0 && systemOf(body).startsWith('You compress the history');
}

export function toolResults(body: WireBody): WireMessage[] {
  return body.messages.filter((m) => m.role === 'tool');
}

/**
 * Which decision a request is for: the call whose result it answers last (`call-2`), or `start` for the
 * first. Unlike counting messages, this survives a summary replacing older steps.
 */
export function decisionKey(body: WireBody): string {
  return toolResults(body).at(-1)?.tool_call_id ?? 'start';
}

/** The run's input: the first user message of a decision request; a summary request carries it in its transcript. */
function mentionsInput(body: WireBody, input: string): boolean {
  if (isSummarization(body))
    return body.messages.some((m) => m.role === 'user' && (m.content ?? '').includes(JSON.stringify(input)));
  return body.messages.find((m) => m.role === 'user')?.content === input;
}

export type Script = (body: WireBody) => FakeLlmReply;

export interface ScriptedLlm {
  readonly url: string;
  readonly server: FakeLlmServer;
  /** Answers every request of the run whose input is `input` with `script`. */
  script(input: string, script: Script): void;
  /** The requests of that run, in order (decisions and summaries). */
  requestsFor(input: string): WireBody[];
}

/** Registers beforeAll/afterAll: a fake model answering per run, and a temporary directory for agents files. */
export function useScriptedLlm(): { llm: () => ScriptedLlm; dir: () => string } {
  let server: FakeLlmServer | undefined;
  let dir: string | undefined;
  const scripts = new Map<string, Script>();
  let current: ScriptedLlm | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dura-agents-'));
    server = await startFakeLlmServer({
      provider: 'openai',
      respond: ({ body }) => {
        const wire = body as WireBody;
        for (const [input, script] of scripts) if (mentionsInput(wire, input)) return script(wire);
        return { kind: 'status', status: 400, body: { error: { message: 'no script for this run' } } };
      },
    });
    const s = server;
    current = {
      url: s.url,
      server: s,
      script: (input, script) => scripts.set(input, script),
      requestsFor: (input) => s.requests.map(bodyOf).filter((body) => mentionsInput(body, input)),
    };
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    llm: () => {
      if (!current) throw new Error('useScriptedLlm(): only available inside tests, after beforeAll');
      return current;
    },
    dir: () => {
      if (!dir) throw new Error('useScriptedLlm(): only available inside tests, after beforeAll');
      return dir;
    },
  };
}

/** Writes an agents file (the JSON `DURA_AGENTS` points at) and returns its path. */
export async function writeAgentsFile(dir: string, name: string, file: unknown): Promise<string> {
  const path = join(dir, `${name}.json`);
  await writeFile(path, JSON.stringify(file, null, 2));
  return path;
}

/** The model settings of an agent answered by the fake model. */
export function fakeModel(url: string, extra: Record<string, unknown> = {}) {
  return { provider: 'openai', model: 'fake-1', baseUrl: url, maxTokens: 100, maxAttempts: 2, ...extra };
}

/** How many requests each decision got (see `decisionKey`), summaries left out. */
export function requestsPerDecision(bodies: readonly WireBody[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const body of bodies.filter((b) => !isSummarization(b)))
    counts[decisionKey(body)] = (counts[decisionKey(body)] ?? 0) + 1;
  return counts;
}
