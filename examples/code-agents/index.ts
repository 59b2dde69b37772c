// The code-agent examples, for DURA_AGENTS (see docs/agents-as-code.md, "Examples"):
//   DURA_AGENTS=examples/code-agents/index.ts DURA_TOOLS_MODULES=examples/code-agents/tools.ts npm run dev -- \
//     --run examples/code-agents/approved-release.json
export { approvedRelease } from './approval-flow';
export { releaseCheck, serviceCheck } from './orchestrator';
export { researcher } from './research';
