// The crash points of an AI SDK agent (fixtures/ai-sdk-agents.ts), registered by ai-sdk-crash.e2e.spec.ts
// (separate services) and ai-sdk-crash-worker.slow.spec.ts (a worker): SIGKILL after the model answered but
// before the answer was recorded, after a recorded answer's intents, and while the model's answer streams.
// Every run completes, the fake provider is asked each recorded turn once (only the answer the kill lost is
// asked again), each charge reaches the witness once, and `dura replay` finds no divergence.
import { expect, it } from 'vitest';
import { expectKilledAt, logOf, type CrashSystem, type FailpointSpec } from './crash-harness';
import { killNow } from './agent-support';
import { eventually } from './system';
import { expectShopped, SHOPPERS, type FakeLlmProvider, type ShopModels } from './ai-sdk-support';

type Decider = 'planner' | 'worker';

const PROVIDERS: FakeLlmProvider[] = ['openai', 'anthropic'];
const thoughts = async (sys: CrashSystem, runId: string) =>
  (await logOf(sys, runId)).filter((e) => e.type === 'thought').length;

/** How often each of the four turns was asked. */
const askedTurns = (models: ShopModels, provider: FakeLlmProvider, runId: string) =>
  [0, 1, 2, 3].map((turn) => models.asked(provider, runId, turn));

export function aiSdkCrashCases(decider: Decider, crash: () => CrashSystem, models: () => ShopModels): void {
  const submit = (sys: CrashSystem, provider: FakeLlmProvider, runId: string) =>
    sys.submit({ runId, agent: { kind: 'agent', name: SHOPPERS[provider] }, input: null });

  async function killedAt(provider: FakeLlmProvider, runId: string, failpoint: FailpointSpec) {
    const sys = crash();
    await sys.restart(decider, failpoint, models().env());
    await submit(sys, provider, runId);
    await expectKilledAt(sys, decider, failpoint);
    return sys;
  }

  for (const provider of PROVIDERS) {
    it(`${provider}: killed after the model answered, before the answer was recorded: only that turn is asked again`, async () => {
      const runId = `aisdk-${decider}-${provider}-after-model`;
      const sys = await killedAt(provider, runId, 'planner.after-model:2');
      expect(askedTurns(models(), provider, runId)).toEqual([1, 1, 0, 0]);
      expect(await thoughts(sys, runId)).toBe(1);

      await sys.restart(decider, undefined, models().env());
      await expectShopped(sys, runId);
      expect(askedTurns(models(), provider, runId)).toEqual([1, 2, 1, 1]);
    });

    it(`${provider}: killed after a recorded answer's intents: no turn is asked again`, async () => {
      const runId = `aisdk-${decider}-${provider}-after-intent`;
      const sys = await killedAt(provider, runId, 'planner.after-intent:2');
      expect(await thoughts(sys, runId)).toBe(2);

      await sys.restart(decider, undefined, models().env());
      await expectShopped(sys, runId);
      expect(askedTurns(models(), provider, runId)).toEqual([1, 1, 1, 1]);
    });

    it(`${provider}: killed while the model's answer streams: the unrecorded stream is asked again, nothing else`, async () => {
      const sys = crash();
      const runId = `aisdk-${decider}-${provider}-mid-stream`;
      await sys.restart(decider, undefined, models().env());
      models().slow(runId, 2, 1_000);
      await submit(sys, provider, runId);
      await eventually(
        () => Promise.resolve(models().asked(provider, runId, 2) === 1 || undefined),
        `${runId}: turn 2 streaming`,
        60_000,
      );
      await killNow(sys, decider);
      expect(await thoughts(sys, runId)).toBe(2);

      await sys.restart(decider, undefined, models().env());
      await expectShopped(sys, runId);
      expect(askedTurns(models(), provider, runId)).toEqual([1, 1, 2, 1]);
    });
  }
}
