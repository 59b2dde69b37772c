// J on the deployed services: one run of the bench code agent through a planner process (continuations kept,
// the default) and a gateway process, its step cycle read from the stream's store times.
import { fileURLToPath } from 'node:url';
import { createDuraClient } from '@dura/client';
import { openDeployment } from '../deployment';
import { countReporter } from '../progress';
import type { BenchScenarios } from '../schema';
import { distribution, round } from '../stats';
import { runTimings } from '../step-timings';
import { lastRunSeq, readStoredEvents } from '../stream-log';
import { BENCH_CODE_AGENT } from './code-agent';

const AGENT_MODULE = fileURLToPath(new URL('./code-agent.ts', import.meta.url));
const ENDED = new Set(['run_completed', 'run_failed', 'run_cancelled', 'run_rejected']);

export async function codeAgentOnServices(
  steps: number,
): Promise<NonNullable<BenchScenarios['code']>['services']> {
  await using deployment = await openDeployment('code', { DURA_AGENTS: AGENT_MODULE });
  await deployment.start('tool-gateway');
  await deployment.start('planner');
  const client = createDuraClient(deployment);
  const runId = 'code-on-services';
  const before = await lastRunSeq(deployment.jsm);
  const report = countReporter('J: steps through planner and gateway processes', steps, 100);
  const began = performance.now();
  await client.submitRun({ runId, agent: { kind: 'agent', name: BENCH_CODE_AGENT }, input: { steps } });
  let completed = 0;
  let ended: string | undefined;
  const signal = AbortSignal.timeout(60_000 + steps * 200);
  for await (const event of client.watchRun(runId, { signal })) {
    if (event.type === 'tool_call_completed') report(++completed);
    if (ENDED.has(event.type)) {
      ended = event.type;
      break;
    }
  }
  const clientRunMs = performance.now() - began;
  if (ended !== 'run_completed')
    throw new Error(`the code agent's run on the services ended ${ended ?? 'never'}`);
  const timings = runTimings(await readStoredEvents(deployment.js, deployment.jsm, before));
  return {
    mode: 'processes',
    stepCycleMs: distribution(timings.stepCycle),
    intentToObservationMs: distribution(timings.intentToObservation),
    runWallMs: round(timings.runWall[0] ?? 0),
    clientRunMs: round(clientRunMs),
  };
}
