// The research example's tool: a search over a small offline library of notes, so the example runs anywhere
// (no network, no keys) and gives the same answer for the same query. Load it into the planner and the
// gateway with DURA_TOOLS_MODULES=examples/code-agents/tools.ts (npm run dev reads it too).
import { z } from 'zod';
import { defineTool } from '@dura/tools';

const LIBRARY: readonly { id: string; title: string; text: string }[] = [
  {
    id: 'n1',
    title: 'Event sourcing',
    text: 'An event-sourced system stores the facts that happened; current state is a fold over them.',
  },
  {
    id: 'n2',
    title: 'Durable execution',
    text: 'Durable execution records each step of a program so a crashed run resumes where it stopped.',
  },
  {
    id: 'n3',
    title: 'Idempotency keys',
    text: 'An idempotency key lets a side effect be retried safely: a repeat returns the first result.',
  },
  {
    id: 'n4',
    title: 'Deterministic replay',
    text: 'Replay re-runs code against its recorded log; code that asks for something else diverges.',
  },
  {
    id: 'n5',
    title: 'Outbox pattern',
    text: 'The outbox commits a result and the message announcing it in one transaction.',
  },
  {
    id: 'n6',
    title: 'Human approval',
    text: 'A run that needs a person waits durably for a signal and holds no process meanwhile.',
  },
];

const words = (text: string): string[] => text.toLowerCase().match(/[a-z]+/g) ?? [];

/** Notes that share at least one word of four letters or more with the query, best first (at most 3). */
export const researchSearch = defineTool({
  name: 'research.search',
  description: 'Search the offline research library; returns up to three matching notes.',
  input: z.object({ query: z.string().min(1).max(200) }),
  safety: 'idempotent',
  execute: async ({ query }) => {
    await Promise.resolve();
    const wanted = new Set(words(query).filter((w) => w.length >= 4));
    const hits = LIBRARY.map((note) => ({
      note,
      score: words(`${note.title} ${note.text}`).filter((w) => wanted.has(w)).length,
    }))
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score || a.note.id.localeCompare(b.note.id))
      .slice(0, 3);
    return { query, notes: hits.map(({ note }) => ({ id: note.id, title: note.title, text: note.text })) };
  },
});
