import { parseArgs } from 'node:util';
import { checkFanOutChildren } from './growth-plan';

/** Workload sizes; each is a flag (`--latency-runs 5`) and an environment variable (`BENCH_LATENCY_RUNS=5`). */
export interface BenchSizes {
  latencyRuns: number;
  latencySteps: number;
  throughputRuns: number;
  throughputSteps: number;
  inFlight: number;
  planners: number;
  /** A and B on this many workers (planner and gateway in one process) instead of separate services; 0: off. */
  workers: number;
  resumeEvents: number[];
  resumeRepeats: number;
  idleRuns: number;
  idleSeconds: number;
  projectorEvents: number;
  gateways: number[];
  floorSamples: number;
  listRuns: number;
  listSamples: number;
  waitRuns: number;
  waitResumes: number;
  codeSteps: number;
  codeColdRepeats: number;
  /** K: runs of each `dura` command line timed. */
  cliRuns: number;
  /** L: runs whose first token is timed through GET /runs/:id/tokens. */
  tokenRuns: number;
  /** L: AI SDK calls timed, plain and as durable steps. */
  aisdkSamples: number;
  /** N: model calls admitted under flow control, per variant. */
  admissionCalls: number;
  /** O: runs of a model agent waiting for capacity under a model limit, idle for `idleSeconds`. */
  capacityRuns: number;
  /** P: run lengths, in steps, each a point of its own. */
  historySteps: number[];
  /** P: steps at each point (runs = this / the run length). */
  historyTotalSteps: number;
  /** P: runs in flight at each point (fewer when a point has fewer runs). */
  historyInFlight: number;
  /** Q: runs in flight, each a point of B of its own (runs = the larger of --throughput-runs and twice this). */
  inFlightPoints: number[];
  /** R: parent runs, one at a time. */
  fanoutParents: number;
  /** R: child runs each parent starts in one decision. */
  fanoutChildren: number;
  /** R: echo steps of each child run. */
  fanoutSteps: number;
  /**
   * F, P and Q: points measured in turn on one deployment before a fresh one opens (a point wanting more
   * replicas starts them; one wanting fewer opens a fresh deployment); 1: each point on a fresh deployment.
   */
  pointsPerDeployment: number;
}

export const SCENARIOS = [
  'latency',
  'throughput',
  'resume',
  'idle',
  'projector',
  'scaling',
  'floors',
  'list',
  'waits',
  'code',
  'cli',
  'tokens',
  'aisdk',
  'admission',
  'capacity',
  'history',
  'inflight',
  'fanout',
  'replication',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];
/** The issue's letters work too: `npm run bench -- A C`. */
const LETTERS: Record<string, ScenarioName> = {
  a: 'latency',
  b: 'throughput',
  c: 'resume',
  d: 'idle',
  e: 'projector',
  f: 'scaling',
  g: 'floors',
  h: 'list',
  i: 'waits',
  j: 'code',
  k: 'cli',
  l: 'tokens',
  m: 'aisdk',
  n: 'admission',
  o: 'capacity',
  p: 'history',
  q: 'inflight',
  r: 'fanout',
  s: 'replication',
};

export const DEFAULT_SIZES: BenchSizes = {
  latencyRuns: 20,
  latencySteps: 20,
  throughputRuns: 200,
  throughputSteps: 10,
  inFlight: 50,
  planners: 1,
  workers: 0,
  resumeEvents: [1_000, 10_000],
  resumeRepeats: 3,
  idleRuns: 10_000,
  idleSeconds: 60,
  projectorEvents: 1_000_000,
  gateways: [1, 2, 3],
  floorSamples: 500,
  listRuns: 100_000,
  listSamples: 200,
  waitRuns: 10_000,
  waitResumes: 100,
  codeSteps: 1_000,
  codeColdRepeats: 5,
  cliRuns: 20,
  tokenRuns: 20,
  aisdkSamples: 200,
  admissionCalls: 600,
  capacityRuns: 10_000,
  historySteps: [10, 100, 1_000],
  historyTotalSteps: 10_000,
  historyInFlight: 10,
  inFlightPoints: [50, 500, 5_000],
  fanoutParents: 10,
  fanoutChildren: 10,
  fanoutSteps: 10,
  pointsPerDeployment: 1,
};

/** A run of every scenario in seconds, for the shape test and `--tiny`. */
export const TINY_SIZES: BenchSizes = {
  latencyRuns: 2,
  latencySteps: 2,
  throughputRuns: 4,
  throughputSteps: 2,
  inFlight: 2,
  planners: 1,
  workers: 0,
  resumeEvents: [100],
  resumeRepeats: 1,
  idleRuns: 50,
  idleSeconds: 2,
  projectorEvents: 100,
  gateways: [1, 2],
  floorSamples: 5,
  listRuns: 300,
  listSamples: 5,
  waitRuns: 20,
  waitResumes: 4,
  codeSteps: 20,
  codeColdRepeats: 2,
  cliRuns: 3,
  tokenRuns: 2,
  aisdkSamples: 5,
  admissionCalls: 9,
  capacityRuns: 20,
  historySteps: [2, 6],
  historyTotalSteps: 12,
  historyInFlight: 2,
  inFlightPoints: [2, 4],
  fanoutParents: 1,
  fanoutChildren: 2,
  fanoutSteps: 2,
  // A deployment's start costs more CPU than a tiny point's runs: a curve's points share one.
  pointsPerDeployment: 3,
};

export interface BenchOptions {
  scenarios: ScenarioName[];
  sizes: BenchSizes;
  out: string | undefined;
}

export const HELP = `npm run bench -- [scenario...] [--out FILE] [--tiny] [--<size> N]

Scenarios: latency (A), throughput (B), resume (C), idle (D), projector (E), scaling (F), floors (G: round
trips a step is built from), list (H: GET /runs over projected runs), waits (I: real runs waiting on signals
and durable timers, idle for --idle-seconds, then --wait-resumes of them signalled), code (J: per-step cost
of a --code-steps code agent with its continuation kept, and its cold resume), cli (K: start-up to exit of
\`dura --help\`, \`dura ls\` and \`npx dura --help\`, --cli-runs times each), tokens (L: first-token latency
through GET /runs/:id/tokens against the fake model server's first token, --token-runs runs), aisdk (M: a
generateText call alone and as a durable code-agent step, --aisdk-samples times each), admission (N: what
flow control adds to a model call, --admission-calls per variant), capacity (O: --capacity-runs runs of a
model agent waiting for capacity under 1 request/min, idle for --idle-seconds), history (P: runs of each of
--history-steps steps, --history-total-steps steps and --history-in-flight runs in flight at each length),
inflight (Q: B at each of --in-flight-points runs in flight), fanout (R: --fanout-parents parent runs, one at
a time, each starting --fanout-children child runs of --fanout-steps steps in one decision), replication (S: B
on one nats-server, then on a 3-node cluster with every stream R3); default all. F, P and Q measure each point
on a fresh deployment, or --points-per-deployment points in turn on one (3 with --tiny).
Sizes (flag or BENCH_<NAME> env): ${Object.keys(DEFAULT_SIZES)
  .map((key) => `--${kebab(key)}`)
  .join(' ')}
Lists (resume-events, gateways, history-steps, in-flight-points) are comma-separated. --tiny starts from the tiny sizes of the shape test.`;

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function parseSize(key: keyof BenchSizes, text: string): number | number[] {
  const numbers = text.split(',').map((part) => Number(part.trim()));
  if (numbers.some((n) => !Number.isInteger(n) || n <= 0))
    throw new Error(`--${kebab(key)} wants positive integers, got "${text}"`);
  return Array.isArray(DEFAULT_SIZES[key]) ? numbers : (numbers[0] ?? 0);
}

/** Reads argv and the environment; throws on an unknown scenario or a bad size. */
export function parseBenchOptions(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): BenchOptions | 'help' {
  const keys = Object.keys(DEFAULT_SIZES) as (keyof BenchSizes)[];
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      tiny: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(keys.map((key) => [kebab(key), { type: 'string' as const }])),
    },
  });
  if (values.help) return 'help';
  const sizes: BenchSizes = { ...(values.tiny || env['BENCH_TINY'] === '1' ? TINY_SIZES : DEFAULT_SIZES) };
  for (const key of keys) {
    const text =
      (values as Record<string, unknown>)[kebab(key)] ??
      env[`BENCH_${kebab(key).replaceAll('-', '_').toUpperCase()}`];
    if (typeof text === 'string') (sizes as unknown as Record<string, unknown>)[key] = parseSize(key, text);
  }
  // Checked before any scenario runs, so a run of several stops at once rather than minutes in.
  checkFanOutChildren(sizes.fanoutChildren);
  const scenarios = positionals.map((name) => {
    const found = LETTERS[name.toLowerCase()] ?? SCENARIOS.find((s) => s === name.toLowerCase());
    if (!found) throw new Error(`unknown scenario "${name}"; known: ${SCENARIOS.join(', ')} (or A–S)`);
    return found;
  });
  return {
    scenarios: scenarios.length > 0 ? [...new Set(scenarios)] : [...SCENARIOS],
    sizes,
    out: values.out,
  };
}
