import type { EventData, RunEvent } from '@dura/contracts';

/** How a code agent's step reads on the waterfall: what it asked for and what it computed on the way. */
export interface CodeStepView {
  label: string;
  facts: string[];
}

/** One value a code step computed, as its thought's journal records it (`@dura/code-agents/engine` `JournalEntry`). */
type Entry =
  | { k: 'now'; v: number }
  | { k: 'random'; v: number }
  | { k: 'uuid'; v: string }
  | { k: 'mark'; v: string }
  | { k: 'model'; model: string; inputTokens: number; outputTokens: number; costUsd?: number };

/** The tag a code step's journal carries in its thought's `content` (`@dura/code-agents/engine` `encodeJournal`). */
const JOURNAL_TAG = 'dura.code/1';
/** The model id a code step records when it asked no model (`@dura/code-agents/engine` `frontierThought`). */
const CODE_MODEL_PREFIX = 'code:';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The journal a thought's content carries; `undefined` when the content is not a code step's journal. */
function decodeJournal(content: string | undefined): Entry[] | undefined {
  if (content === undefined || content === '') return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (!isRecord(raw) || raw['journal'] !== JOURNAL_TAG || !Array.isArray(raw['entries'])) return undefined;
  const entries: Entry[] = [];
  for (const entry of raw['entries'] as unknown[]) {
    if (!isRecord(entry)) continue;
    const { k, v, a } = entry;
    if ((k === 'now' || k === 'random') && typeof v === 'number') entries.push({ k, v });
    else if ((k === 'uuid' || k === 'mark') && typeof v === 'string') entries.push({ k, v });
    else if (k === 'model' && isRecord(a)) {
      const usage = isRecord(a['usage']) ? a['usage'] : {};
      const model = isRecord(a['model']) && typeof a['model']['id'] === 'string' ? a['model']['id'] : '?';
      entries.push({
        k,
        model,
        inputTokens: typeof usage['inputTokens'] === 'number' ? usage['inputTokens'] : 0,
        outputTokens: typeof usage['outputTokens'] === 'number' ? usage['outputTokens'] : 0,
        ...(typeof a['costUsd'] === 'number' ? { costUsd: a['costUsd'] } : {}),
      });
    }
  }
  return entries;
}

/** The agent a run was started for: its pinned version, else the agent its request names. */
export function runAgentName(events: readonly RunEvent[]): string | undefined {
  for (const event of events) {
    if (event.type === 'run_started' && event.data.pinned) return event.data.pinned.agent;
    if (event.type === 'run_requested' && event.data.request.agent.kind === 'agent')
      return event.data.request.agent.name;
  }
  return undefined;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function describeEntry(entry: Entry): string {
  switch (entry.k) {
    case 'now':
      return `now ${Number.isFinite(entry.v) ? new Date(entry.v).toISOString() : String(entry.v)}`;
    case 'random':
      return `random ${entry.v}`;
    case 'uuid':
      return `uuid ${entry.v}`;
    case 'mark':
      return entry.v;
    case 'model':
      return `model ${entry.model}: ${entry.inputTokens} in / ${entry.outputTokens} out tokens${
        entry.costUsd === undefined ? '' : ` $${entry.costUsd.toFixed(4)}`
      }`;
  }
}

/**
 * The waterfall's reading of a code agent's step (a thought recorded by `@dura/code-agents`): the calls it
 * asked for, the `now`/`random`/`uuid` values and model calls its journal recorded, and what it decided.
 * `undefined` for a model's thought. A step that asked no model shows no token count.
 */
export function describeCodeStep(thought: EventData<'thought'>, agent?: string): CodeStepView | undefined {
  const journal = decodeJournal(thought.content);
  const byModelId = thought.model.id.startsWith(CODE_MODEL_PREFIX)
    ? thought.model.id.slice(CODE_MODEL_PREFIX.length)
    : undefined;
  if (journal === undefined && byModelId === undefined) return undefined;
  const name = byModelId ?? agent ?? 'agent';
  const { decision } = thought;
  const facts: string[] = [];
  let outcome: string;
  if (decision.kind === 'tool_calls') {
    outcome = plural(decision.calls.length, 'call');
    facts.push(`calls ${decision.calls.map((call) => call.tool).join(', ')}`);
  } else if (decision.kind === 'complete') outcome = 'completed';
  else {
    outcome = 'failed';
    facts.push(`${decision.error.code}: ${decision.error.message}`);
  }
  for (const entry of journal ?? []) facts.push(describeEntry(entry));
  return { label: `code ${name}: ${outcome}`, facts };
}
