// The crash points of an AI SDK agent on a worker (planner and gateway in one process; the cases are in
// ai-sdk-crash-cases.ts): the worker is SIGKILLed, restarted, and every run completes.
import { describe } from 'vitest';
import { useCrashSystem } from './crash-harness';
import { PATIENT_TOOLS_ENV, useShopModels } from './ai-sdk-support';
import { aiSdkCrashCases } from './ai-sdk-crash-cases';

const models = useShopModels();
const crash = useCrashSystem(['projector'], {
  env: (name): Record<string, string> => ({
    ...PATIENT_TOOLS_ENV,
    ...(name === 'worker' ? models().env() : {}),
  }),
});

describe('an AI SDK agent on a worker killed with SIGKILL', () => {
  aiSdkCrashCases('worker', crash, models);
});
