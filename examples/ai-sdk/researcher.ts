// The research example (examples/code-agents/research.ts) written with the AI SDK: one streamText tool loop
// in which the model searches the offline library (a Dura tool, run by the gateway under its idempotency
// key) until it can answer, at most `maxSteps` model turns. Each turn is recorded once and never asked
// again after a crash; a replay answers it from the log.
//
// The model is any OpenAI-compatible server: RESEARCH_MODEL_URL (default Ollama on its usual port).
import { createOpenAI } from '@ai-sdk/openai';
import { stepCountIs, streamText } from 'ai';
import { z } from 'zod';
import { defineAgent } from '@dura/code-agents';
import { durable, duraTools } from '@dura/ai-sdk';
import { researchSearch } from '../code-agents/tools';

const provider = createOpenAI({
  baseURL: process.env.RESEARCH_MODEL_URL ?? 'http://127.0.0.1:11434/v1',
  apiKey: process.env.OPENAI_API_KEY ?? 'unused-by-ollama',
});

const Found = z.object({ notes: z.array(z.object({ id: z.string() })) });

export const aiResearcher = defineAgent({
  name: 'ai-researcher',
  version: '1',
  input: z.object({
    question: z.string().min(1).max(500),
    maxSteps: z.number().int().min(2).max(8).default(6),
  }),
  tools: ['research.search'],
  budget: { maxSteps: 40, maxTokens: 100_000 },
  async run(ctx, { question, maxSteps }) {
    const result = streamText({
      model: durable(ctx, provider.chat('llama3.1'), { maxOutputTokens: 512 }),
      system: 'Research the question with research_search, then answer briefly, citing the note ids.',
      prompt: question,
      tools: duraTools(ctx, [researchSearch]),
      stopWhen: stepCountIs(maxSteps),
    });
    const steps = await result.steps;
    const found = steps.flatMap((step) => step.toolResults.map((r) => Found.parse(r.output).notes));
    return {
      question,
      answer: await result.text,
      steps: steps.length,
      sources: [...new Set(found.flat().map((note) => note.id))].sort(),
    };
  },
});
