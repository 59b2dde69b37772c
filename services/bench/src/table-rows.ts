// Rows of the report's table that more than one scenario prints.
import type { CpuDetail, Distribution, ThroughputResult } from './schema';

/** One line of the table: scenario, figure, value. */
export type Row = [string, string, string];

export const ms = (d: Distribution) =>
  `p50 ${d.p50.toFixed(2)} ms  p99 ${d.p99.toFixed(2)} ms  (n=${d.count})`;
export const n = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 1 });

/** `CPU ms per step` rows: the groups' figures, then how Postgres was counted and what came and went. */
export function cpuRows(cpuMsPerStep: Record<string, number>, cpu: CpuDetail): Row[] {
  const entries = Object.entries(cpuMsPerStep);
  const total = entries.reduce((sum, [, v]) => sum + v, 0);
  const rows: Row[] = [
    [
      '',
      'CPU ms per step',
      `${total.toFixed(2)}: ${entries.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`,
    ],
  ];
  const pg = cpu.postgres;
  const pgProcesses = cpu.processes['postgres'];
  rows.push([
    '',
    'postgres counted',
    pg.measured && pgProcesses
      ? `server ${pg.serverMsPerStep.toFixed(2)} − other databases ${pg.otherDatabasesMsPerStep.toFixed(2)} ` +
        `(${pg.otherDatabaseBackends} backends seen); ${pgProcesses.seen} processes seen, ` +
        `${pgProcesses.startedWithin} started and ${pgProcesses.endedWithin} ended within, ` +
        `${pgProcesses.reapedMsPerStep.toFixed(2)} ms/step from ended ones`
      : 'not measured: the server is not on this machine',
  ]);
  return rows;
}

/** A B-shaped measurement: steps per second, the step's timings, and CPU per step by process group. */
export function throughputRows(label: string, b: ThroughputResult): Row[] {
  return [
    [
      label,
      'steps/s',
      `${n(b.stepsPerSecond)} (${b.completedSteps} steps in ${n(b.elapsedMs)} ms, ${b.runsFailed} failed)`,
    ],
    ['', 'intent → observation', ms(b.intentToObservationMs)],
    ['', 'step cycle', ms(b.stepCycleMs)],
    ...cpuRows(b.cpuMsPerStep, b.cpu),
  ];
}
