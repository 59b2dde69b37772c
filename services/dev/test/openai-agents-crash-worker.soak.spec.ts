// The crash points of an OpenAI Agents SDK agent on a worker (planner and gateway in one process; the
// cases are in openai-agents-crash-cases.ts): the worker is SIGKILLed, restarted, and every run completes.
// In the soak tier (`npm run test-soak -w @dura/dev`) to keep `npm test` within its time: the same cases run in
// `npm test` on separate services (openai-agents-crash.e2e.spec.ts), and a worker killed after the model
// answered and after an intent runs there too (crash-worker.e2e.spec.ts); the AI SDK's worker twin is in the
// slow tier (ai-sdk-crash-worker.slow.spec.ts).
import { describe } from 'vitest';
import { useCrashSystem } from './crash-harness';
import { agentsCrashCases, PATIENT_TOOLS_ENV, useAgentsModels } from './openai-agents-crash-cases';

const models = useAgentsModels();
const crash = useCrashSystem(['projector'], {
  env: (name): Record<string, string> => ({
    ...PATIENT_TOOLS_ENV,
    ...(name === 'worker' ? models().env() : {}),
  }),
});

describe('an Agents SDK agent on a worker killed with SIGKILL', () => {
  agentsCrashCases('worker', crash, models);
});
