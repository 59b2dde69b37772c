// The crash points of an AI SDK agent on separate planner, tool-gateway and projector processes (the cases
// are in ai-sdk-crash-cases.ts): the planner is SIGKILLed, restarted, and every run completes.
import { describe } from 'vitest';
import { useCrashSystem } from './crash-harness';
import { PATIENT_TOOLS_ENV, useShopModels } from './ai-sdk-support';
import { aiSdkCrashCases } from './ai-sdk-crash-cases';

const models = useShopModels();
const crash = useCrashSystem(['tool-gateway', 'projector'], {
  env: (name): Record<string, string> => ({
    ...PATIENT_TOOLS_ENV,
    ...(name === 'planner' ? models().env() : {}),
  }),
});

describe('an AI SDK agent on separate services, its planner killed with SIGKILL', () => {
  aiSdkCrashCases('planner', crash, models);
});
