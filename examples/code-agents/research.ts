// Evaluator-optimizer with a fan-out: the model plans search queries, the searches run in parallel (one
// decision, parallel intents), the model judges what was found and either answers or asks for more, at most
// `maxRounds` rounds. Every model answer is recorded once and never asked again after a crash.
//
// The model is any OpenAI-compatible server: RESEARCH_MODEL_URL (default Ollama on its usual port). The URL
// is a connection setting, not part of a recorded request, so moving the server changes no run.
import { z } from 'zod';
import { defineAgent, type Ctx } from '@dura/code-agents';

const Input = z.object({
  question: z.string().min(1).max(500),
  maxRounds: z.number().int().min(1).max(5).default(3),
});

const Found = z.object({
  notes: z.array(z.object({ id: z.string(), title: z.string(), text: z.string() })),
});
type Note = z.infer<typeof Found>['notes'][number];

const Plan = z.object({ queries: z.array(z.string().min(1)).min(1).max(4) });
const Verdict = z.object({
  done: z.boolean(),
  answer: z.string().default(''),
  followUps: z.array(z.string().min(1)).max(4).default([]),
});

/** The JSON object a model answered with, parsed by `schema`; undefined when it answered something else. */
function parsed<T>(schema: z.ZodType<T>, content: string): T | undefined {
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end < start) return undefined;
  try {
    const result = schema.safeParse(JSON.parse(content.slice(start, end + 1)));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

async function plan(ctx: Ctx, question: string): Promise<string[]> {
  const answer = await ctx.model({
    system:
      'You plan research. Answer only with JSON {"queries": ["..."]}: one to four short search queries.',
    prompt: question,
  });
  // A model that ignores the format still gets a search: the question itself.
  return parsed(Plan, answer.content)?.queries ?? [question];
}

async function judge(ctx: Ctx, question: string, notes: Note[], round: number) {
  const answer = await ctx.model({
    system:
      'You judge research notes. Answer only with JSON {"done": boolean, "answer": "...", ' +
      '"followUps": ["..."]}: done with an answer when the notes suffice, otherwise follow-up queries.',
    prompt: `Question: ${question}\nRound: ${round}\nNotes:\n${notes.map((n) => `- ${n.title}: ${n.text}`).join('\n')}`,
  });
  return parsed(Verdict, answer.content) ?? { done: true, answer: answer.content, followUps: [] };
}

export const researcher = defineAgent({
  name: 'researcher',
  version: '1',
  input: Input,
  model: {
    provider: 'openai',
    model: 'llama3.1',
    baseUrl: process.env.RESEARCH_MODEL_URL ?? 'http://127.0.0.1:11434/v1',
    apiKeyEnv: 'OPENAI_API_KEY',
    maxTokens: 512,
  },
  tools: ['research.search'],
  budget: { maxSteps: 40 },
  async run(ctx, { question, maxRounds }) {
    const notes = new Map<string, Note>();
    let queries = await plan(ctx, question);
    for (let round = 1; ; round += 1) {
      const found = await Promise.all(queries.map((query) => ctx.tool('research.search', { query })));
      for (const result of found) for (const note of Found.parse(result).notes) notes.set(note.id, note);
      const verdict = await judge(ctx, question, [...notes.values()], round);
      const last = round >= maxRounds || verdict.followUps.length === 0;
      if (verdict.done || last) {
        return {
          question,
          answer: verdict.answer,
          rounds: round,
          complete: verdict.done,
          sources: [...notes.keys()].sort(),
        };
      }
      queries = verdict.followUps;
    }
  },
});
