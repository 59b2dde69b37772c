// The table's rows for the growth scenarios P, Q, R and S.
import type { Growth } from './growth-schema';
import type { BenchScenarios } from './schema';
import { ms, throughputRows, type Row } from './table-rows';

const times = (x: number) => `${x.toFixed(2)}×`;

function growthRow(what: string, g: Growth): Row {
  return [
    '',
    `growth, ${what}`,
    `CPU per step ${times(g.cpuMsPerStep)}, step cycle p50 ${times(g.stepCycleP50)}, steps/s ${times(g.stepsPerSecond)}`,
  ];
}

/** Rows of whichever of P, Q, R and S the report holds. */
export function growthRows({ history, inflight, fanout, replication }: BenchScenarios): Row[] {
  const rows: Row[] = [];
  if (history) {
    for (const p of history.points)
      rows.push(...throughputRows(`P ${p.runs} runs × ${p.steps} steps, ${p.inFlight} in flight`, p));
    rows.push(growthRow('longest runs over shortest', history.growth));
  }
  if (inflight) {
    for (const p of inflight.points)
      rows.push(...throughputRows(`Q ${p.runs}×${p.steps}, ${p.inFlight} in flight`, p));
    rows.push(growthRow('most in flight over fewest', inflight.growth));
  }
  if (fanout) {
    const label = `R fan-out ${fanout.runs} × ${fanout.children} children × ${fanout.childSteps} steps`;
    rows.push([label, 'parent run wall', ms(fanout.parentWallMs)]);
    rows.push(['', 'child run wall', ms(fanout.childWallMs)]);
    rows.push(...throughputRows('', fanout));
    const d = fanout.direct;
    rows.push(...throughputRows(`R the same ${d.runs} runs, no parent, ${d.inFlight} in flight`, d));
  }
  if (replication) {
    for (const p of replication.points)
      rows.push(
        ...throughputRows(`S B on ${p.natsNodes} node(s), R${p.streamReplicas} (${p.runs}×${p.steps})`, p),
      );
    rows.push(growthRow('R3 over R1', replication.growth));
  }
  return rows;
}
