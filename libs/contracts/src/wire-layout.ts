/** Stream, subject and bucket names: the wire layout every service and client agrees on. */
export const STREAMS = {
  requests: 'DURA_REQUESTS',
  runs: 'DURA_RUNS',
  tasks: 'DURA_TASKS',
  deadLetters: 'DURA_DLQ',
  /** Messages that event triggers turn into runs (`dura.event.>`). */
  events: 'DURA_EVENTS',
  /** Live model text per run, model call and attempt; bounded retention, never needed to rebuild a run. */
  tokens: 'DURA_TOKENS',
} as const;

export const SUBJECTS = {
  submit: 'dura.submit',
  signal: 'dura.signal',
  fork: 'dura.fork',
  runPrefix: 'dura.run',
  allRuns: 'dura.run.*',
  toolTaskPrefix: 'dura.task.tool',
  allToolTasks: 'dura.task.tool.>',
  decideTask: 'dura.task.decide',
  timerTask: 'dura.task.timer',
  deadLetterPrefix: 'dura.dlq',
  allDeadLetters: 'dura.dlq.>',
  allEvents: 'dura.event.>',
  tokensPrefix: 'dura.tokens',
  allTokens: 'dura.tokens.*',
  /** A debounced `POST /runs`, handed by the projector to a planner (request/reply, never stored). */
  runGateAsk: 'dura.gate.runs',
  /**
   * A tool call a planner hands straight to a gateway (request/reply on `dura.call.<tool>`, one gateway of
   * the queue group, never stored): its durable fallback is the tool task.
   */
  directCallPrefix: 'dura.call',
  allDirectCalls: 'dura.call.>',
} as const;

export const BUCKETS = {
  snapshots: 'dura_snapshots',
  payloads: 'dura_payloads',
  /** runId → reason, written when a run is cancelled: gateways watch it to abort in-flight calls. */
  cancellations: 'dura_cancellations',
  /** scheduleId → schedule record: spec, pause, cursor of handled ticks, recent runs. */
  schedules: 'dura_schedules',
  /** triggerId → event trigger spec. */
  triggers: 'dura_triggers',
  /** runId → `{ pinned, afterSeq }`: runs no running planner serves, parked until one that does comes up. */
  parked: 'dura_parked_runs',
  /** `agent.<name>.<version>` and `tool.<name>` → what the running planners and gateways serve (expires). */
  catalogue: 'dura_catalogue',
  /** One entry per debounce / skip-if-running key: its open window and its last run (compare-and-set). */
  runGates: 'dura_run_gates',
  /** `l.<key>` → a limit's shared state, `t.<key>.<holder>` → a rate ticket, `d.<key>.<digest>` → a declaration. */
  flow: 'dura_flow',
} as const;

/** `NATS_URL` may list several servers of a cluster, comma-separated; clients get them as a list. */
export function natsServers(url: string): string[] {
  return url
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server.length > 0);
}

/** The run's live model text in `DURA_TOKENS` (one subject per run, read by sequence from a cursor). */
export function tokensSubject(runId: string): string {
  return `${SUBJECTS.tokensPrefix}.${runId}`;
}

/** The run's log subject. All of a run's events share it, so one expected-sequence check guards the whole run. */
export function runSubject(runId: string): string {
  return `${SUBJECTS.runPrefix}.${runId}`;
}

export function runIdFromSubject(subject: string): string | undefined {
  const prefix = `${SUBJECTS.runPrefix}.`;
  if (!subject.startsWith(prefix)) return undefined;
  const rest = subject.slice(prefix.length);
  return rest.length > 0 && !rest.includes('.') ? rest : undefined;
}

export function toolTaskSubject(tool: string): string {
  return `${SUBJECTS.toolTaskPrefix}.${tool}`;
}

/** Where a planner asks a gateway to run a call of `tool` directly (see `SUBJECTS.directCallPrefix`). */
export function directCallSubject(tool: string): string {
  return `${SUBJECTS.directCallPrefix}.${tool}`;
}

export function deadLetterSubject(source: string): string {
  return `${SUBJECTS.deadLetterPrefix}.${source}`;
}
