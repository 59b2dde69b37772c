// An OpenAI Agents SDK agent inside a Dura code agent (docs/openai-agents.md): a triage agent hands a
// research question off to a researcher, which searches the offline library (research.search, a Dura tool
// run by the gateway) until it can answer. The models are any OpenAI-compatible Chat Completions server
// (Ollama by default, or RESEARCH_MODEL_URL).
import { Agent, handoff, OpenAIProvider } from '@openai/agents';
import { z } from 'zod';
import { defineAgent } from '@dura/code-agents';
import { durableRun, duraTools } from '@dura/openai-agents';

const provider = new OpenAIProvider({
  baseURL: process.env.RESEARCH_MODEL_URL ?? 'http://127.0.0.1:11434/v1',
  apiKey: process.env.RESEARCH_MODEL_KEY ?? 'ollama',
  useResponses: false,
});

export const helpDesk = defineAgent({
  name: 'agents-help-desk',
  version: '1',
  input: z.object({ question: z.string().min(1).max(500) }),
  tools: ['research.search'],
  budget: { maxSteps: 40, maxTokens: 100_000 },
  async run(ctx, { question }) {
    const researcher = new Agent({
      name: 'researcher',
      model: 'llama3.1',
      instructions: 'Search the library with research_search, then answer briefly, citing the note ids.',
      tools: duraTools(ctx, ['research.search']),
    });
    const triage = new Agent({
      name: 'triage',
      model: 'llama3.1',
      instructions: 'Hand research questions to the researcher.',
      handoffs: [handoff(researcher)],
    });
    const result = await durableRun(ctx, triage, question, { provider, stream: true, maxOutputTokens: 512 });
    return { question, answer: result.finalOutput ?? '', answeredBy: result.lastAgent?.name ?? '' };
  },
});
