// The nemesis soak's model provider: a fake OpenAI-compatible server whose mood the slow nemesis sets, with
// every request noted (which run, which prompt, when, which replica asked), and the prompts a thought records.
import type { RunEvent } from '@dura/contracts';
import { startFakeLlmServer, type FakeLlmServer } from '@dura/testing';
import { NEMESIS_JUDGE, NEMESIS_PLAN } from '../fixtures/nemesis-agents';
import type { ModelAsk } from './log-checks';
import type { ModelFaults } from './nemesis';

/**
 * The prompts whose answers a thought records, known by the answers the fake model gives them: a code agent's
 * thought carries its step's model answers in a journal (`{"entries":[{"k":"model","a":{"content"}}]}`).
 */
export function promptsOfThought(thought: RunEvent & { type: 'thought' }): string[] {
  let entries: unknown;
  try {
    entries = (JSON.parse(thought.data.content ?? '') as { entries?: unknown }).entries;
  } catch {
    return [];
  }
  if (!Array.isArray(entries)) return [];
  return entries.flatMap((entry: { k?: unknown; a?: { content?: unknown } }) => {
    if (entry.k !== 'model') return [];
    if (entry.a?.content === JSON.stringify(NEMESIS_PLAN)) return ['plan'];
    if (entry.a?.content === String(NEMESIS_JUDGE)) return ['judge'];
    return [];
  });
}

function lastUserText(body: unknown): string {
  const messages = (body as { messages?: { role: string; content?: unknown }[] }).messages ?? [];
  const user = messages.filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : '';
}

/** A fake OpenAI-compatible provider whose mood `faults` sets; every request is noted in `asks`. */
export function startModel(faults: ModelFaults, asks: ModelAsk[]): Promise<FakeLlmServer> {
  return startFakeLlmServer({
    provider: 'openai',
    respond: ({ body, headers, receivedAt }) => {
      const [prompt = '', runId = ''] = lastUserText(body).split(' ');
      const caller = headers['authorization']?.replace(/^Bearer /, '');
      asks.push({ runId, prompt, at: receivedAt, ...(caller ? { caller } : {}) });
      if (faults.failNext > 0) {
        faults.failNext -= 1;
        return { kind: 'status', status: 503 };
      }
      const content = prompt === 'plan' ? JSON.stringify(NEMESIS_PLAN) : String(NEMESIS_JUDGE);
      return { kind: 'message', content, ...(faults.lateMs > 0 ? { delayMs: faults.lateMs } : {}) };
    },
  });
}
