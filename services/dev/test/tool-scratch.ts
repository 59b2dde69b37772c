// Shared by agent-timers, agent-cancel, agent-payloads and worker-cancel: a scratch directory for the fixture
// tools' log and gates, the environment that loads those tools into the planner and the gateway, and readers
// of what the services keep outside the run log (the cancellations bucket, dead letters).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { BUCKETS, STREAMS, type DeadLetter, type RunEvent } from '@dura/contracts';
import { WITNESS_TOOLS, useCrashSystem, type CrashSystem, type ServiceName } from './crash-harness';
import type { ToolLogEntry } from './fixtures/agent3-tools';
import { eventually } from './system';

export const AGENT3_TOOLS = fileURLToPath(new URL('./fixtures/agent3-tools.ts', import.meta.url));

export interface Scratch {
  readonly dir: string;
  /** Every service loads the witness tools and the agent3 fixture tools, which log to this directory. */
  env(): Record<string, string>;
  /** What the fixture tools recorded, in order. */
  toolLog(): Promise<ToolLogEntry[]>;
  /** Lets a `test.big` call waiting on `gate` go on. */
  openGate(gate: string): Promise<void>;
  /** Writes `file` as JSON into the directory; returns its path. */
  writeJson(name: string, file: unknown): Promise<string>;
}

/** Registers beforeAll/afterAll: a temporary directory for the fixture tools' log, gates and agents files. */
export function useScratch(): () => Scratch {
  let current: Scratch | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    const root = await mkdtemp(join(tmpdir(), 'dura-agent3-'));
    dir = root;
    const logPath = join(root, 'tool-log.jsonl');
    current = {
      dir: root,
      env: () => ({
        DURA_TOOLS_MODULES: `${WITNESS_TOOLS},${AGENT3_TOOLS}`,
        AGENT3_TOOL_LOG: logPath,
        AGENT3_GATE_DIR: root,
      }),
      toolLog: async () => {
        const text = await readFile(logPath, 'utf8').catch(() => '');
        return text
          .split('\n')
          .filter((line) => line.trim().length > 0)
          .map((line) => JSON.parse(line) as ToolLogEntry);
      },
      openGate: (gate) => writeFile(join(root, gate), 'open'),
      writeJson: async (name, file) => {
        const path = join(root, `${name}.json`);
        await writeFile(path, JSON.stringify(file, null, 2));
        return path;
      },
    };
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!current) throw new Error('useScratch(): only available inside tests, after beforeAll');
    return current;
  };
}

/**
 * A scratch directory (`useScratch`) and a crash system with no service running yet (`useCrashSystem`) whose
 * services load the scratch tools, plus what `env(name)` adds for service `name` (read each time it starts).
 */
export function useScratchSystem(env: (name: ServiceName) => Record<string, string> = () => ({})): {
  scratch: () => Scratch;
  crash: () => CrashSystem;
} {
  const scratch = useScratch();
  const crash = useCrashSystem([], { env: (name) => ({ ...scratch().env(), ...env(name) }) });
  return { scratch, crash };
}

/** Waits until the fixture tools recorded `event` for a call of `runId`; returns that entry. */
export function untilTool(
  scratch: Scratch,
  runId: string,
  event: ToolLogEntry['event'],
  timeoutMs = 30_000,
): Promise<ToolLogEntry> {
  return eventually(
    async () => (await scratch.toolLog()).find((e) => e.runId === runId && e.event === event),
    `${runId}: a tool call to record "${event}"`,
    timeoutMs,
  );
}

export const eventsOf = <T extends RunEvent['type']>(log: readonly RunEvent[], type: T) =>
  log.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

/** The run's entry in the `dura_cancellations` bucket ({reason, ts}), or undefined when it has none. */
export async function cancellationMark(
  sys: CrashSystem,
  runId: string,
): Promise<{ reason: string; ts: string } | undefined> {
  const stream = `KV_${BUCKETS.cancellations}`;
  const info = await sys.system.jsm.streams.info(stream).catch(() => undefined);
  if (!info) return undefined;
  const msg = await sys.system.jsm.streams.getMessage(stream, {
    last_by_subj: `$KV.${BUCKETS.cancellations}.${runId}`,
  });
  if (!msg || msg.data.length === 0) return undefined;
  return msg.json<{ reason: string; ts: string }>();
}

/** Dead letters of `source` (e.g. `decide`) about `runId`: named by the letter, or by the message it holds. */
export async function deadLettersOf(sys: CrashSystem, source: string, runId: string): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  const info = await sys.system.jsm.streams.info(STREAMS.deadLetters).catch(() => undefined);
  if (!info) return letters;
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq += 1) {
    const msg = await sys.system.jsm.streams.getMessage(STREAMS.deadLetters, { seq }).catch(() => null);
    if (!msg) continue;
    const letter = msg.json<DeadLetter>();
    if (letter.source === source && (letter.runId ?? runIdIn(letter)) === runId) letters.push(letter);
  }
  return letters;
}

function runIdIn(letter: DeadLetter): string | undefined {
  if (letter.payloadEncoding !== 'utf8') return undefined;
  try {
    const body = JSON.parse(letter.payload) as { runId?: unknown };
    return typeof body.runId === 'string' ? body.runId : undefined;
  } catch {
    return undefined;
  }
}
