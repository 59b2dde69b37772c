// The AI SDK examples, for DURA_AGENTS (see docs/ai-sdk.md):
//   DURA_AGENTS=examples/ai-sdk/index.ts DURA_TOOLS_MODULES=examples/code-agents/tools.ts npm run dev -- \
//     --run examples/ai-sdk/research.json
export { aiResearcher } from './researcher';
