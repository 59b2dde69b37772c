// A fake OpenAI-compatible provider with a provider's limits, as flow control meets them: a requests bucket
// (and optionally an input-tokens bucket) refilled continuously, 429 with Retry-After above either, and the
// calls in flight at once measured. Each answer reports the usage the buckets counted.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeLlmServer, type FakeLlmServer } from '@dura/testing';

export interface ProviderLimits {
  requestsPerMinute: number;
  /** Seconds' worth each bucket holds (60: a minute's worth, as most providers count). */
  burstSeconds: number;
  /** Input tokens per minute, counted from the usage each answer reports (`inputTokens` below). */
  inputTokensPerMinute?: number;
  /** Input tokens each answer reports. */
  inputTokens?: number;
  /** How long each answer takes. */
  latencyMs?: number;
}

export interface LimitedProvider {
  server: FakeLlmServer;
  /** Calls refused with 429, each with the bucket it found short and its level. */
  readonly refusals: string[];
  /** The most calls in flight at once, as the provider saw them. */
  maxInFlight(): number;
  /** The calls in flight when the most were (each `user text@arrival ms`): which runs overlapped, when one fails. */
  atMaxInFlight(): string[];
  /** Answered calls: when each arrived, and the user text it carried (flow tests put the run id there). */
  readonly answered: { at: number; text: string }[];
  /**
   * Holds back the answers of calls admitted from now on until `release()`: they stay in flight, and so hold
   * their callers' concurrency slots for as long as a test needs.
   */
  hold(): void;
  /** Lets the calls held back answer (each after its latency), and answers at once again. */
  release(): void;
  /** Calls held back now (a call its caller gave up on is not). */
  held(): number;
  close(): Promise<void>;
}

export async function startLimitedProvider(limits: ProviderLimits): Promise<LimitedProvider> {
  const latencyMs = limits.latencyMs ?? 300;
  const inputTokens = limits.inputTokens ?? 20;
  const buckets = [
    { name: 'requests', perMinute: limits.requestsPerMinute, cost: 1 },
    ...(limits.inputTokensPerMinute
      ? [{ name: 'input tokens', perMinute: limits.inputTokensPerMinute, cost: inputTokens }]
      : []),
  ].map((bucket) => {
    const capacity = (bucket.perMinute * limits.burstSeconds) / 60;
    return { ...bucket, capacity, level: capacity };
  });
  let at = Date.now();
  let inFlight = 0;
  let maxInFlight = 0;
  const live = new Set<string>();
  let atMax: string[] = [];
  const refusals: string[] = [];
  const answered: { at: number; text: string }[] = [];
  // While held: the calls whose answers are held back, each to be let go.
  let held: Set<() => void> | undefined;
  const release = () => {
    const waiting = [...(held ?? [])];
    held = undefined;
    for (const go of waiting) go();
  };
  const server = await startFakeLlmServer({
    provider: 'openai',
    respond: async ({ receivedAt, body, gone }) => {
      for (const bucket of buckets)
        bucket.level = Math.min(
          bucket.capacity,
          bucket.level + ((receivedAt - at) * bucket.perMinute) / 60_000,
        );
      at = receivedAt;
      const short = buckets.find((bucket) => bucket.level < bucket.cost);
      if (short) {
        refusals.push(`${short.name} at ${short.level.toFixed(3)} (${lastUserText(body)}@${receivedAt})`);
        return { kind: 'status', status: 429, headers: { 'retry-after': '1' } };
      }
      for (const bucket of buckets) bucket.level -= bucket.cost;
      const text = lastUserText(body);
      const call = `${text}@${receivedAt}`;
      inFlight += 1;
      live.add(call);
      if (inFlight > maxInFlight) {
        maxInFlight = inFlight;
        atMax = [...live];
      }
      answered.push({ at: receivedAt, text });
      // A call is in flight until it is answered, or until its caller gives up on it (a planner aborts a call
      // whose decision another replica recorded, and takes no slot for it any more).
      let over = false;
      const end = () => {
        if (over) return;
        over = true;
        inFlight -= 1;
        live.delete(call);
      };
      if (gone.aborted) end();
      else gone.addEventListener('abort', end, { once: true });
      const gate = held;
      if (gate && !gone.aborted)
        await new Promise<void>((resolve) => {
          const go = () => {
            gone.removeEventListener('abort', go);
            gate.delete(go);
            resolve();
          };
          gate.add(go);
          gone.addEventListener('abort', go, { once: true });
        });
      setTimeout(end, latencyMs);
      return {
        kind: 'message',
        content: 'done',
        usage: { inputTokens, outputTokens: 2 },
        delayMs: latencyMs,
      };
    },
  });
  return {
    server,
    refusals,
    maxInFlight: () => maxInFlight,
    atMaxInFlight: () => atMax,
    answered,
    hold: () => {
      held ??= new Set();
    },
    release,
    held: () => held?.size ?? 0,
    close: () => {
      release();
      return server.close();
    },
  };
}

/** The text of the last user message of a Chat Completions request. */
function lastUserText(body: unknown): string {
  const messages =
    (body as { messages?: { role?: string; content?: unknown }[] } | undefined)?.messages ?? [];
  const user = messages.filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content ?? '');
}

/**
 * Writes `agents.json` in `dir` with one JSON agent, `writer@1`, that asks the provider (as OpenAI's API, model
 * `fake-1`, retrying a call once); returns the file's path, for a planner's DURA_AGENTS.
 */
export async function writeWriterAgent(
  dir: string,
  provider: LimitedProvider,
  maxTokens: number,
): Promise<string> {
  const path = join(dir, 'agents.json');
  const model = {
    provider: 'openai',
    model: 'fake-1',
    baseUrl: provider.server.url,
    maxTokens,
    maxAttempts: 2,
  };
  await writeFile(path, JSON.stringify({ agents: [{ name: 'writer', version: '1', model }] }));
  return path;
}
