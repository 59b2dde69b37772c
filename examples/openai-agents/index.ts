// The OpenAI Agents SDK examples, for DURA_AGENTS (see docs/openai-agents.md):
//   DURA_AGENTS=examples/openai-agents/index.ts DURA_TOOLS_MODULES=examples/code-agents/tools.ts \
//     npm run dev -- --run examples/openai-agents/help-desk.json
export { helpDesk } from './help-desk';
