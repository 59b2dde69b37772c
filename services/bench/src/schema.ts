import * as z from 'zod';
import { AdmissionSchema } from './admission-schema';
import { DistributionSchema, ModeSchema } from './distribution-schema';
import { GrowthScenariosSchema } from './growth-schema';
import { CpuDetailSchema, CpuMsPerStepSchema, StepTimingsSchema, ThroughputSchema } from './runs-schema';

export { DistributionSchema, type Distribution } from './distribution-schema';
export type { CpuDetail, ThroughputResult } from './runs-schema';

const LatencySchema = StepTimingsSchema.extend({
  mode: ModeSchema,
  runs: z.number().int(),
  steps: z.number().int(),
  cpuMsPerStep: CpuMsPerStepSchema,
  cpu: CpuDetailSchema,
  /** `run_requested` stored → `run_completed` stored. */
  runWallMs: DistributionSchema,
  /** Client-observed: submit publish → `run_completed` seen on the subject. */
  clientRunWallMs: DistributionSchema,
});

const ResumeCaseSchema = z.object({
  events: z.number().int(),
  snapshots: z.boolean(),
  /** Fresh driver's `drive()`: load (snapshot + tail, or the whole log), fold, decide, append, dispatch. */
  driveMs: z.number().nonnegative(),
  repeats: z.number().int(),
  driveMsAll: z.array(z.number().nonnegative()),
});

const ResumeSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  cases: z.array(ResumeCaseSchema),
});

const ProcessIdleSchema = z.object({
  name: z.string(),
  pid: z.number().int(),
  rssStartMiB: z.number().nonnegative(),
  rssEndMiB: z.number().nonnegative(),
  cpuSeconds: z.number().nonnegative(),
  /** cpuSeconds / window: 1.0 is one core fully busy. */
  cpuShare: z.number().nonnegative(),
});

const IdleSchema = z.object({
  mode: ModeSchema,
  suspendedRuns: z.number().int(),
  windowSeconds: z.number().positive(),
  processes: z.array(ProcessIdleSchema),
});

/** An idle window over a whole deployment (`measureIdleWindow`): every process, and the database. */
const idleWindowShape = {
  windowSeconds: z.number().positive(),
  processes: z.array(ProcessIdleSchema),
  /** The Postgres backends serving this deployment's database, CPU over the window. */
  postgres: z.object({
    backends: z.number().int(),
    cpuSeconds: z.number().nonnegative(),
    cpuShare: z.number().nonnegative(),
  }),
};

const WaitsSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  /** Real runs submitted; half wait for a signal, half on a durable timer. */
  runs: z.number().int(),
  /** First submit → every run projected as waiting and every timer stored. */
  suspendMs: z.number().nonnegative(),
  /** Runs the read model shows waiting, by wait kind, before and after the window. */
  waitingStart: z.object({ signal: z.number().int(), timer: z.number().int() }),
  waitingEnd: z.object({ signal: z.number().int(), timer: z.number().int() }),
  ...idleWindowShape,
  /** After the window: rows of the gateway's `timers` table, those not fired, and its `dura_timers_pending`. */
  timers: z.object({
    rows: z.number().int(),
    unfiredRows: z.number().int(),
    gatewayPending: z.number().int(),
  }),
  /** Signal runs woken one at a time after the window. */
  resume: z.object({
    signalled: z.number().int(),
    completed: z.number().int(),
    /** How each signalled run ended (`completed`, `failed`, ... or `timed_out`). */
    outcomes: z.record(z.string(), z.number().int()),
    /** Client-observed: signal publish → `run_completed` seen on the run's subject. */
    signalToCompletedMs: DistributionSchema,
  }),
});

const CapacityCountsSchema = z.object({
  capacity: z.number().int(),
  completed: z.number().int(),
  other: z.number().int(),
});

const CapacitySchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  /** Real runs of a model agent submitted under `limit`. */
  runs: z.number().int(),
  limit: z.object({ model: z.string(), requestsPerMinute: z.number().positive() }),
  /** First submit → the runs projected as waiting for capacity. */
  suspendMs: z.number().nonnegative(),
  /** Whether the runs settled (all but 1 % waiting for capacity or completed) before the window opened. */
  settled: z.boolean(),
  /** Runs the read model shows waiting for capacity, completed, or anything else, before and after the window. */
  waitingStart: CapacityCountsSchema,
  waitingEnd: CapacityCountsSchema,
  ...idleWindowShape,
  /** Within the window: run events appended (rechecks of waiting runs), model calls the provider received. */
  during: z.object({ eventsAppended: z.number().int(), modelCalls: z.number().int() }),
  /** Size of the limit's shared KV record after the window (its line of waiting callers included). */
  limitRecordBytes: z.number().int(),
  /** After the window: rows of the gateway's `timers` table, and those not fired. */
  timers: z.object({ rows: z.number().int(), unfiredRows: z.number().int() }),
});

const ProjectorSchema = z.object({
  mode: ModeSchema,
  events: z.number().int(),
  note: z.string(),
  /** Async batched publish of the events, no expected sequence. */
  publishEventsPerSecond: z.number().nonnegative(),
  /** Projector process spawn → its checkpoint at the stream's last sequence. */
  catchUpMs: z.number().nonnegative(),
  eventsPerSecond: z.number().nonnegative(),
  startupMs: z.number().nonnegative(),
});

const FloorsSchema = z.object({
  mode: ModeSchema,
  /** One append: publish with msg-id and expected-last-subject-sequence, acknowledged (file storage). */
  jetstreamPublishMs: DistributionSchema,
  /** One STREAM.MSG.GET next_by_subj: how the planner reads a cached run's tail. */
  jetstreamDirectGetMs: DistributionSchema,
  /** Create a short-lived consumer, fetch one message, delete it: how a cold read starts. */
  jetstreamConsumerReadMs: DistributionSchema,
  /** Core NATS request/reply through the server. */
  natsRequestMs: DistributionSchema,
  /** INSERT of one row, autocommit. */
  postgresCommitMs: DistributionSchema,
  /** BEGIN, UPDATE, INSERT, COMMIT. */
  postgresTwoStatementTransactionMs: DistributionSchema,
  /** SELECT 1: the round trip without a commit. */
  postgresQueryMs: DistributionSchema,
});

const ListSchema = z.object({
  mode: ModeSchema,
  /** Runs in the read model, and the events that built them. */
  runs: z.number().int(),
  events: z.number().int(),
  note: z.string(),
  /** Projecting those events through the projector's batch path. */
  projectMs: z.number().nonnegative(),
  projectEventsPerSecond: z.number().nonnegative(),
  /** One `GET /runs` page per sample, per query shape. */
  queries: z.array(
    z.object({ shape: z.string(), query: z.string(), rows: z.number().int(), latencyMs: DistributionSchema }),
  ),
});

/** L: one `generateText` alone, and as a durable code-agent step through the run driver. */
const AiSdkSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  samples: z.number().int(),
  plainMs: DistributionSchema,
  durableStepMs: DistributionSchema,
  /** `durableStepMs` less `plainMs`, at p50 and at p99 (either may be negative within noise). */
  overheadMs: z.object({ p50: z.number(), p99: z.number() }),
});

const CodeSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  /** Tool steps of the code agent (one call each), then its completion. */
  steps: z.number().int(),
  /** Decisions that resumed the kept execution (`warm`) or replayed the code from the start (`cold`). */
  continuations: z.object({ warm: z.number().int(), cold: z.number().int() }),
  /** The planner's step for each decision with the continuation kept: advance + the thought. */
  cachedStepMs: DistributionSchema,
  /** Every 10th decision again with nothing kept: the code replays from the start (grows with the step). */
  uncachedStepMs: DistributionSchema,
  /** The decision after the last step with nothing kept: the code replays every recorded step. */
  coldResumeMs: DistributionSchema,
  /** The same, folding the log's events first. */
  coldResumeWithFoldMs: DistributionSchema,
  /** The same run through the planner's run driver over a real nats-server. */
  driver: z.object({
    events: z.number().int(),
    /** One `drive()` per step: read the tail, decide (kept continuation), append thought and intent, dispatch. */
    stepDriveMs: DistributionSchema,
    /** The last decision by a fresh driver: snapshot + tail, cold replay, append. */
    coldResumeDriveMs: z.number().nonnegative(),
  }),
  /** One run through planner and gateway processes (continuations kept), from the stream's store times. */
  services: z.object({
    mode: ModeSchema,
    /** `tool_call_requested` of step n → of step n+1: gateway, observation, decide task, decision. */
    stepCycleMs: DistributionSchema,
    intentToObservationMs: DistributionSchema,
    runWallMs: z.number().nonnegative(),
    clientRunMs: z.number().nonnegative(),
  }),
});

const CliSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  /** The Node the commands ran on (the bench's own). */
  node: z.string(),
  /** Per command line: wall time from spawning the process to its exit. */
  commands: z.array(z.object({ name: z.string(), wallMs: DistributionSchema })),
});

const TokensSchema = z.object({
  mode: ModeSchema,
  note: z.string(),
  runs: z.number().int(),
  /** From the fake model server writing the answer's first text piece to the client reading the first `token` event. */
  firstTokenMs: DistributionSchema,
});

const ScalingSchema = z.object({
  mode: ModeSchema,
  points: z.array(ThroughputSchema),
});

export const BenchReportSchema = z.object({
  schemaVersion: z.literal(1),
  startedAt: z.string(),
  totalSeconds: z.number().nonnegative(),
  scenariosRequested: z.array(z.string()),
  machine: z.object({
    cores: z.number().int().positive(),
    cpuModel: z.string(),
    memoryGiB: z.number().positive(),
    os: z.string(),
    /** 1-, 5- and 15-minute load averages when the bench started: other work on the machine moves every figure. */
    loadAverageAtStart: z.tuple([
      z.number().nonnegative(),
      z.number().nonnegative(),
      z.number().nonnegative(),
    ]),
    /**
     * How fast this machine was when the bench started (medians of 5; lower is faster): `cpuMs`, one fixed
     * JavaScript workload (encode and decode a run event 5,000 times); `writeUs`, one small write system call.
     * Shared and virtual machines vary by 2× and more from day to day: compare figures of runs whose probes agree.
     */
    speed: z.object({ cpuMs: z.number().nonnegative(), writeUs: z.number().nonnegative() }).optional(),
  }),
  versions: z.object({
    node: z.string(),
    natsServer: z.string(),
    postgres: z.string(),
    bench: z.string(),
    gitCommit: z.string(),
  }),
  durability: z.object({
    /** Storage of the stream the runs' events live in (`file` or `memory`), with its replicas. */
    jetstreamStorage: z.string(),
    /** Every stream the services use, by name: `file` or `memory`, and replicas. */
    jetstreamStreams: z.record(z.string(), z.object({ storage: z.string(), replicas: z.number().int() })),
    /** When JetStream fsyncs its files: `sync_interval` from the server's config when set, else its default. */
    jetstreamSync: z.string(),
    postgresSynchronousCommit: z.string(),
    postgresFsync: z.string(),
  }),
  settings: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
  scenarios: z.object({
    latency: LatencySchema.optional(),
    throughput: ThroughputSchema.optional(),
    resume: ResumeSchema.optional(),
    idle: IdleSchema.optional(),
    projector: ProjectorSchema.optional(),
    scaling: ScalingSchema.optional(),
    floors: FloorsSchema.optional(),
    list: ListSchema.optional(),
    waits: WaitsSchema.optional(),
    code: CodeSchema.optional(),
    cli: CliSchema.optional(),
    admission: AdmissionSchema.optional(),
    capacity: CapacitySchema.optional(),
    tokens: TokensSchema.optional(),
    aisdk: AiSdkSchema.optional(),
    ...GrowthScenariosSchema,
  }),
});
export type BenchReport = z.infer<typeof BenchReportSchema>;
export type BenchScenarios = BenchReport['scenarios'];
