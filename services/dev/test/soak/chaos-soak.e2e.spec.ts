// The short chaos soak for CI (the full one: `npm run soak`). Two planners, two gateways and a projector as
// processes; a random one SIGKILLed every 1–2 s and started again; the nats-server and Postgres each killed
// and restarted once. Every run must complete with one effect per key and its projection equal to its fold.
import { expect, it } from 'vitest';
import { CI_SOAK, runSoak } from './soak-runner';

it('survives kills of every service and restarts of the broker and the database', async () => {
  const report = await runSoak({
    ...CI_SOAK,
    ...(process.env['DURA_TEST_VERBOSE'] === '1' ? { progress: (line: string) => console.error(line) } : {}),
  });
  console.log(JSON.stringify(report.figures));
  expect(report.ok, report.explanation).toBe(true);
  expect(report.figures.duplicates).toBe(0);
}, 300_000);
