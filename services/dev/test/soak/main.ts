// `npm run soak`: the full chaos soak (100 runs × 8 steps unless SOAK_RUNS / SOAK_STEPS say otherwise).
// `npm run soak -- --nemesis pause,slow,clock,disk|all [--minutes N]`: the nemesis soak instead, rounds of
// one fault each, in turn, for N minutes (default: one round per fault).
// Prints its figures as one JSON line on stdout, progress and any failure explanation on stderr; exits 1
// when the contract did not hold, 2 on bad arguments.
import { parseArgs } from 'node:util';
import { parseNemeses } from './nemesis';
import { runNemesisSoak, SHORT_NEMESIS } from './nemesis-runner';
import { FULL_SOAK, runSoak } from './soak-runner';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) fail(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

const { values } = (() => {
  try {
    return parseArgs({
      options: { nemesis: { type: 'string' }, minutes: { type: 'string' } },
      allowPositionals: false,
    });
  } catch (err) {
    return fail(`${(err as Error).message}\nusage: npm run soak [-- --nemesis <list|all> [--minutes N]]`);
  }
})();
const progress = (line: string) => process.stderr.write(`${line}\n`);

if (values.nemesis !== undefined) {
  let nemeses;
  try {
    nemeses = parseNemeses(values.nemesis);
  } catch (err) {
    fail((err as Error).message);
  }
  const minutes = values.minutes === undefined ? undefined : positive('--minutes', values.minutes, 1);
  const report = await runNemesisSoak({
    ...SHORT_NEMESIS,
    // A long soak keeps more runs in flight per round.
    ...(minutes === undefined ? {} : { plans: 8, sleepers: 3, thinkers: 3, diskMb: 1024 }),
    nemeses,
    rounds: nemeses.length,
    ...(minutes === undefined ? {} : { minutes }),
    progress,
  });
  process.stdout.write(`${JSON.stringify(report.figures)}\n`);
  if (!report.ok) process.stderr.write(`${report.explanation}\n`);
  process.exit(report.ok ? 0 : 1);
}
if (values.minutes !== undefined) fail('--minutes goes with --nemesis');

const report = await runSoak({
  ...FULL_SOAK,
  runs: positive('SOAK_RUNS', process.env['SOAK_RUNS'], FULL_SOAK.runs),
  steps: positive('SOAK_STEPS', process.env['SOAK_STEPS'], FULL_SOAK.steps),
  progress,
});
process.stdout.write(`${JSON.stringify(report.figures)}\n`);
if (!report.ok) process.stderr.write(`${report.explanation}\n`);
process.exit(report.ok ? 0 : 1);
