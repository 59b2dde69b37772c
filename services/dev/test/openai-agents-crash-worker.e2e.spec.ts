// The crash points of an OpenAI Agents SDK agent on a worker (planner and gateway in one process; the
// cases are in openai-agents-crash-cases.ts): the worker is SIGKILLed, restarted, and every run completes.
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
