// The chat example's own tool: saving a note for the user, a call a person approves on the page before the
// gateway runs it (the agent asks with duraTools' needsApproval). Load it beside the library search:
// DURA_TOOLS_MODULES=examples/code-agents/tools.ts,examples/chat/tools.ts.
import { z } from 'zod';
import { defineTool } from '@dura/tools';

/** Keeps a note the user asked the assistant to remember; answers with what it kept. */
export const notesSave = defineTool({
  name: 'notes.save',
  description: 'Save a note the user asked you to remember. A person approves each save.',
  input: z.object({ text: z.string().min(1).max(500) }),
  safety: 'idempotent',
  execute: async ({ text }) => {
    await Promise.resolve();
    return { saved: text };
  },
});
