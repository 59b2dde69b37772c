// The crash points of an OpenAI Agents SDK agent on separate planner, tool-gateway and projector processes
// (the cases are in openai-agents-crash-cases.ts): the planner is SIGKILLed, restarted, and every run completes.
import { describe } from 'vitest';
import { useCrashSystem } from './crash-harness';
import { agentsCrashCases, PATIENT_TOOLS_ENV, useAgentsModels } from './openai-agents-crash-cases';

const models = useAgentsModels();
const crash = useCrashSystem(['tool-gateway', 'projector'], {
  env: (name): Record<string, string> => ({
    ...PATIENT_TOOLS_ENV,
    ...(name === 'planner' ? models().env() : {}),
  }),
});

describe('an Agents SDK agent on separate services, its planner killed with SIGKILL', () => {
  agentsCrashCases('planner', crash, models);
});
