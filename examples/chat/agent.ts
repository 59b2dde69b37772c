// The chat example's agent (docs/chat.md): one turn of a conversation, written with the AI SDK. The chat
// route starts it once per user message with the earlier turns' recorded answers as `history`; the model may
// search the offline library (a Dura tool, run by the gateway) before it answers, and save a note, a call the
// page approves first. Load it with DURA_AGENTS=examples/chat/agent.ts
// DURA_TOOLS_MODULES=examples/code-agents/tools.ts,examples/chat/tools.ts. The model is any OpenAI-compatible
// server: CHAT_MODEL_URL (default: the example's fake model, npm run fake-model).
import { createOpenAI } from '@ai-sdk/openai';
import { stepCountIs, streamText } from 'ai';
import { z } from 'zod';
import { defineAgent } from '@dura/code-agents';
import { durable, duraTools } from '@dura/ai-sdk';
// The offline library tool the other examples use (examples/code-agents is a folder of files, not a package).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { researchSearch } from '../code-agents/tools';
import { notesSave } from './tools';

const provider = createOpenAI({
  baseURL: process.env.CHAT_MODEL_URL ?? 'http://127.0.0.1:11435/v1',
  apiKey: process.env.OPENAI_API_KEY ?? 'unused-by-the-fake',
});

export const chatAssistant = defineAgent({
  name: 'chat-assistant',
  version: '1',
  input: z.object({
    chatId: z.string(),
    messageId: z.string(),
    message: z.string().min(1).max(4000),
    history: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })).max(200),
  }),
  tools: ['research.search', 'notes.save'],
  budget: { maxSteps: 20, maxTokens: 200_000 },
  async run(ctx, { message, history }) {
    const result = streamText({
      model: durable(ctx, provider.chat(process.env.CHAT_MODEL ?? 'fake-chat'), { maxOutputTokens: 1024 }),
      system:
        'You are a helpful assistant. Search the library with research_search when it helps; ' +
        'save what the user asks you to remember with notes_save.',
      messages: [...history, { role: 'user', content: message }],
      // A person approves each note on the page before the gateway saves it; a refusal is told to the model.
      tools: duraTools(ctx, [researchSearch, { ...notesSave, needsApproval: true }]),
      stopWhen: stepCountIs(4),
    });
    return { text: await result.text };
  },
});
