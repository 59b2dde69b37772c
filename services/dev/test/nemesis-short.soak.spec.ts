// The short nemesis soak, outside `npm test` (it holds CI past 20 minutes on a 2-core machine): run it with
// `npm run test-soak -w @dura/dev`; the long one: `npm run soak -- --nemesis all --minutes 30`. On two planners,
// two gateways, a worker and a projector, one round per fault, each with runs in flight: a planner, a gateway
// and a worker SIGSTOPped past their ack wait and lease; the payment API and the model answering after their
// callers gave up, then failing in bursts; the wall clocks of a planner, a gateway and the worker stepped 5 min
// ahead and back; the broker's store filled to the last byte, then freed, and frozen, then thawed; the same for
// Postgres's disk. After each fault heals,
// every run completes and the checker (soak/log-checks.ts, soak/verify.ts) finds nothing charged twice,
// nothing acknowledged lost, no decision or timer twice, no timer early and no recorded model answer asked again.
import { expect, it } from 'vitest';
import { parseNemeses } from './soak/nemesis';
import { runNemesisSoak, SHORT_NEMESIS } from './soak/nemesis-runner';

// DURA_NEMESIS=pause,disk runs only those rounds (how a guard's mutation is shown to fail its round).
const nemeses = parseNemeses(process.env['DURA_NEMESIS'] ?? 'pause,slow,clock,disk,stall,pgdisk,pgstall,netsplit');

it('every run completes with nothing done twice or lost after each nemesis heals', async () => {
  const report = await runNemesisSoak({
    ...SHORT_NEMESIS,
    nemeses,
    rounds: nemeses.length,
    ...(process.env['DURA_TEST_VERBOSE'] === '1' ? { progress: (line: string) => console.error(line) } : {}),
  });
  console.log(JSON.stringify(report.figures));
  expect(report.ok, report.explanation).toBe(true);
  expect(report.figures.duplicates).toBe(0);
  expect(report.figures.lost).toBe(0);
  for (const nemesis of nemeses) expect(report.figures.faults[nemesis], nemesis).toBeGreaterThan(0);
}, 600_000);
