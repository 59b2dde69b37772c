import { growthRows } from './growth-table';
import type { BenchReport, Distribution } from './schema';
import { cpuRows, ms, n, throughputRows, type Row } from './table-rows';

/** The report as aligned `scenario | figure | value` lines for a terminal. */
export function formatTable(report: BenchReport): string {
  const rows: Row[] = [];
  const {
    latency,
    throughput,
    resume,
    idle,
    projector,
    scaling,
    floors,
    list,
    waits,
    code,
    cli,
    tokens,
    aisdk,
    admission,
    capacity,
  } = report.scenarios;
  if (latency) {
    const label = `A latency (${latency.runs}×${latency.steps})`;
    rows.push([label, 'intent → observation', ms(latency.intentToObservationMs)]);
    rows.push(['', 'step cycle', ms(latency.stepCycleMs)]);
    rows.push(['', 'run wall (stream)', ms(latency.runWallMs)]);
    rows.push(['', 'run wall (client)', ms(latency.clientRunWallMs)]);
    rows.push(...cpuRows(latency.cpuMsPerStep, latency.cpu));
  }
  for (const [label, b] of [
    ...(throughput
      ? [
          [
            `B throughput (${throughput.runs}×${throughput.steps}, ${throughput.inFlight} in flight${
              throughput.workers ? `, ${throughput.workers} worker(s)` : ''
            })`,
            throughput,
          ] as const,
        ]
      : []),
    ...(scaling?.points.map((p) => [`F ${p.gateways} gateway(s), ${p.planners} planner(s)`, p] as const) ??
      []),
  ]) {
    rows.push(...throughputRows(label, b));
  }
  for (const c of resume?.cases ?? [])
    rows.push([
      `C resume ${n(c.events)} events`,
      `snapshots ${c.snapshots ? 'on' : 'off'}`,
      `${c.driveMs.toFixed(1)} ms (median of ${c.repeats})`,
    ]);
  for (const p of idle?.processes ?? [])
    rows.push([
      `D idle ${n(idle?.suspendedRuns ?? 0)} runs, ${idle?.windowSeconds} s`,
      p.name,
      `RSS ${p.rssStartMiB} → ${p.rssEndMiB} MiB, CPU ${p.cpuSeconds.toFixed(2)} s (${(p.cpuShare * 100).toFixed(2)} %)`,
    ]);
  if (projector) {
    rows.push([
      `E projector ${n(projector.events)} events`,
      'events/s',
      `${n(projector.eventsPerSecond)} (${n(projector.catchUpMs)} ms)`,
    ]);
    rows.push(['', 'publish events/s', n(projector.publishEventsPerSecond)]);
  }
  if (floors) {
    const floorRows: [string, Distribution][] = [
      ['JetStream publish (append)', floors.jetstreamPublishMs],
      ['JetStream direct get', floors.jetstreamDirectGetMs],
      ['JetStream consumer read', floors.jetstreamConsumerReadMs],
      ['NATS request/reply', floors.natsRequestMs],
      ['Postgres commit (1 row)', floors.postgresCommitMs],
      ['Postgres transaction (2)', floors.postgresTwoStatementTransactionMs],
      ['Postgres query (select 1)', floors.postgresQueryMs],
    ];
    floorRows.forEach(([name, d], i) => rows.push([i === 0 ? 'G round-trip floors' : '', name, ms(d)]));
  }
  if (list) {
    const label = `H list (${n(list.runs)} runs)`;
    rows.push([label, 'projected', `${n(list.events)} events at ${n(list.projectEventsPerSecond)} events/s`]);
    for (const q of list.queries) rows.push(['', q.shape, `${ms(q.latencyMs)}, ${q.rows} rows`]);
  }
  if (waits) {
    const label = `I waits ${n(waits.runs)} runs, ${waits.windowSeconds} s`;
    rows.push([
      label,
      'waiting (start → end)',
      `signal ${waits.waitingStart.signal} → ${waits.waitingEnd.signal}, timer ${waits.waitingStart.timer} → ${waits.waitingEnd.timer} (suspended in ${n(waits.suspendMs)} ms)`,
    ]);
    for (const p of waits.processes)
      rows.push([
        '',
        p.name,
        `RSS ${p.rssStartMiB} → ${p.rssEndMiB} MiB, CPU ${p.cpuSeconds.toFixed(2)} s (${(p.cpuShare * 100).toFixed(2)} %)`,
      ]);
    rows.push([
      '',
      `postgres (${waits.postgres.backends} backends)`,
      `CPU ${waits.postgres.cpuSeconds.toFixed(2)} s (${(waits.postgres.cpuShare * 100).toFixed(2)} %)`,
    ]);
    rows.push([
      '',
      'timers',
      `${waits.timers.rows} rows, ${waits.timers.unfiredRows} unfired, gateway pending ${waits.timers.gatewayPending}`,
    ]);
    rows.push([
      '',
      'signal → completed',
      `${ms(waits.resume.signalToCompletedMs)}, ${waits.resume.completed}/${waits.resume.signalled} completed`,
    ]);
  }
  if (code) {
    const label = `J code agent (${n(code.steps)} steps)`;
    rows.push([
      label,
      'step, continuation kept',
      `${ms(code.cachedStepMs)}, mean ${code.cachedStepMs.mean} ms`,
    ]);
    rows.push([
      '',
      'step, replayed from start',
      `${ms(code.uncachedStepMs)}, mean ${code.uncachedStepMs.mean} ms`,
    ]);
    rows.push(['', 'cold resume (replay)', ms(code.coldResumeMs)]);
    rows.push(['', 'cold resume (fold + replay)', ms(code.coldResumeWithFoldMs)]);
    rows.push(['', 'run driver step (NATS)', ms(code.driver.stepDriveMs)]);
    rows.push(['', 'run driver cold resume', `${code.driver.coldResumeDriveMs.toFixed(1)} ms`]);
    rows.push(['', 'step cycle (processes)', ms(code.services.stepCycleMs)]);
  }
  if (cli) {
    cli.commands.forEach((c, i) => {
      rows.push([i === 0 ? `K cli start-up (node ${cli.node})` : '', c.name, ms(c.wallMs)]);
    });
  }
  if (tokens) rows.push(['L token stream', "first token after the model's", ms(tokens.firstTokenMs)]);
  if (aisdk) {
    rows.push(['M AI SDK step', 'generateText alone', ms(aisdk.plainMs)]);
    rows.push(['', 'as a durable step (NATS)', ms(aisdk.durableStepMs)]);
    rows.push([
      '',
      'overhead',
      `p50 ${aisdk.overheadMs.p50.toFixed(2)} ms  p99 ${aisdk.overheadMs.p99.toFixed(2)} ms`,
    ]);
  }
  if (admission) {
    rows.push(['N admission', 'no limit declared', ms(admission.noLimitMs)]);
    rows.push(['', 'limits declared, 1 replica', ms(admission.oneReplicaMs)]);
    rows.push(['', 'limits declared, 3 replicas at once', ms(admission.threeReplicasMs)]);
    const line = admission.lineJoin;
    if (line) {
      const record = `${n(line.callersInLine)} in line, ${n(line.recordBytes)} B (${line.bytesPerCaller} B each)`;
      rows.push(['', `joining a line (${record})`, ms(line.joinMs)]);
      rows.push(['', 'asking with the line full', ms(line.fullLineMs)]);
    }
  }
  if (capacity) rows.push(...capacityRows(capacity));
  rows.push(...growthRows(report.scenarios));
  const widths = [0, 1].map((i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
  const lines = rows.map(([a, b, c]) => `${a.padEnd(widths[0] ?? 0)}  ${b.padEnd(widths[1] ?? 0)}  ${c}`);
  const { machine, versions, durability } = report;
  return [
    `machine: ${machine.cores} cores, ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.os}, ` +
      `load average at start ${machine.loadAverageAtStart.join(' ')}` +
      (machine.speed
        ? `, speed probe ${machine.speed.cpuMs} ms CPU, ${machine.speed.writeUs} µs per write (lower is faster)`
        : ''),
    `versions: node ${versions.node}, nats-server ${versions.natsServer}, postgres ${versions.postgres}, commit ${versions.gitCommit}`,
    `durability: JetStream ${Object.entries(durability.jetstreamStreams)
      .map(([name, s]) => `${name} ${s.storage} (replicas ${s.replicas})`)
      .join(', ')}; sync ${durability.jetstreamSync}; ` +
      `Postgres synchronous_commit=${durability.postgresSynchronousCommit}, fsync=${durability.postgresFsync}`,
    '',
    ...lines,
    '',
    `total ${report.totalSeconds.toFixed(1)} s`,
  ].join('\n');
}

function capacityRows(o: NonNullable<BenchReport['scenarios']['capacity']>): Row[] {
  const counts = (c: typeof o.waitingStart) =>
    `${c.capacity} waiting, ${c.completed} completed, ${c.other} other`;
  return [
    [
      `O capacity ${n(o.runs)} runs, ${o.windowSeconds} s`,
      'start → end',
      `${counts(o.waitingStart)} → ${counts(o.waitingEnd)} (in ${n(o.suspendMs)} ms${o.settled ? '' : ', not settled'})`,
    ],
    ...o.processes.map((p): Row => [
      '',
      p.name,
      `RSS ${p.rssStartMiB} → ${p.rssEndMiB} MiB, CPU ${p.cpuSeconds.toFixed(2)} s (${(p.cpuShare * 100).toFixed(2)} %)`,
    ]),
    [
      '',
      `postgres (${o.postgres.backends} backends)`,
      `CPU ${o.postgres.cpuSeconds.toFixed(2)} s (${(o.postgres.cpuShare * 100).toFixed(2)} %)`,
    ],
    [
      '',
      'during the window',
      `${o.during.eventsAppended} events appended, ${o.during.modelCalls} model calls; limit record ${n(o.limitRecordBytes)} bytes`,
    ],
  ];
}
