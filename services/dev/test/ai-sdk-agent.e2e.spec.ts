// AI SDK agents (fixtures/ai-sdk-agents.ts: streamText, three Dura tools, a 6-step stopWhen loop) on
// separate planner, tool-gateway and projector processes over real NATS and Postgres, through @ai-sdk/openai
// and @ai-sdk/anthropic against fake providers on real HTTP: each run completes, each model call is asked
// once, each charge reaches the payment witness once, and `dura replay` finds no divergence.
import { describe, expect, it } from 'vitest';
import { decodeJournal } from '@dura/code-agents/engine';
import { useCrashSystem } from './crash-harness';
import { expectShopped, SHOPPERS, PATIENT_TOOLS_ENV, useShopModels } from './ai-sdk-support';

const models = useShopModels();
const crash = useCrashSystem(['tool-gateway', 'projector', 'planner'], {
  env: (name): Record<string, string> => ({
    ...PATIENT_TOOLS_ENV,
    ...(name === 'planner' ? models().env() : {}),
  }),
});

describe('an AI SDK agent on separate services', () => {
  for (const provider of ['openai', 'anthropic'] as const)
    it(`through @ai-sdk/${provider}: completes, each turn asked once, each charge once, replay without divergence`, async () => {
      const sys = crash();
      const runId = `aisdk-${provider}-clean`;
      await sys.submit({ runId, agent: { kind: 'agent', name: SHOPPERS[provider] }, input: null });
      const log = await expectShopped(sys, runId);

      expect([0, 1, 2, 3].map((turn) => models().asked(provider, runId, turn))).toEqual([1, 1, 1, 1]);
      // Each turn is a model answer in the log: the streamed answer, assembled.
      const answers = log.flatMap((e) =>
        e.type === 'thought' ? decodeJournal(e.data.content).filter((entry) => entry.k === 'model') : [],
      );
      expect(answers.map((a) => (a.k === 'model' ? a.a.finishReason : ''))).toEqual([
        'tool-calls',
        'tool-calls',
        'tool-calls',
        'stop',
      ]);
    });
});
