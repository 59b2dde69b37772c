// `npm run soak`: the full chaos soak (100 runs × 8 steps unless SOAK_RUNS / SOAK_STEPS say otherwise).
// Prints its figures as one JSON line on stdout, progress and any failure explanation on stderr; exits 1
// when the contract did not hold.
import { FULL_SOAK, runSoak } from './soak-runner';

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    process.stderr.write(`${name} must be a positive integer, got "${raw}"\n`);
    process.exit(2);
  }
  return value;
}

const report = await runSoak({
  ...FULL_SOAK,
  runs: positive('SOAK_RUNS', FULL_SOAK.runs),
  steps: positive('SOAK_STEPS', FULL_SOAK.steps),
  progress: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify(report.figures)}\n`);
if (!report.ok) process.stderr.write(`${report.explanation}\n`);
process.exit(report.ok ? 0 : 1);
