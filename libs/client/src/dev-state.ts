import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import * as z from 'zod';

/** Where `npm run dev` says it listens, so that the CLI finds it without flags. */
export const DevStateSchema = z.object({
  v: z.literal(1),
  pid: z.number().int().positive(),
  natsUrl: z.string().min(1),
  apiUrl: z.string().min(1),
  consoleUrl: z.string().min(1),
  startedAt: z.string(),
});
export type DevState = z.infer<typeof DevStateSchema>;

type Env = Record<string, string | undefined>;

/** The registry of running dev stacks, one file each: ~/.dura/stacks. */
export function devStateDir(): string {
  return join(homedir(), '.dura', 'stacks');
}

/**
 * The state file of the stack of process `pid`: $DURA_DEV_STATE_FILE when set (one file, named by hand),
 * else its own file in the registry (~/.dura/stacks/<pid>.json), so that two stacks never share one.
 */
export function devStateFile(env: Env = process.env, pid: number = process.pid): string {
  const override = env.DURA_DEV_STATE_FILE;
  return override !== undefined && override !== '' ? override : join(devStateDir(), `${pid}.json`);
}

/** A state file that describes another stack still running: a stack never overwrites it. */
export class DevStateTaken extends Error {
  constructor(
    readonly file: string,
    readonly holder: DevState,
  ) {
    super(
      `${file} describes the dev stack of process ${holder.pid} (API ${holder.apiUrl}), which is still running; ` +
        'stop it first, or give this stack a file of its own (DURA_DEV_STATE_FILE, or leave it unset: each stack then gets its own file in ~/.dura/stacks)',
    );
    this.name = 'DevStateTaken';
  }
}

/**
 * Writes the state atomically (a reader never sees half a file). Throws `DevStateTaken` when the file
 * describes another process that is still alive.
 */
export function writeDevState(
  file: string,
  state: DevState,
  alive: (pid: number) => boolean = processAlive,
): void {
  const holder = readDevStateFile(file);
  if (holder && holder.pid !== state.pid && alive(holder.pid)) throw new DevStateTaken(file, holder);
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${state.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/** Removes the state file if it still describes the process `pid` (never another stack's). */
export function removeDevState(file: string, pid: number): void {
  const state = readDevStateFile(file);
  if (state?.pid === pid) rmSync(file, { force: true });
}

/**
 * The dev stacks running now, newest first: the one in $DURA_DEV_STATE_FILE when it is set, else every stack
 * in the registry. A file whose process is gone is left out (and, in the registry, removed).
 */
export function readDevStates(
  env: Env = process.env,
  alive: (pid: number) => boolean = processAlive,
): DevState[] {
  const override = env.DURA_DEV_STATE_FILE;
  if (override !== undefined && override !== '') {
    const state = readDevStateFile(override);
    return state && alive(state.pid) ? [state] : [];
  }
  const dir = devStateDir();
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return [];
  }
  const states: DevState[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const state = readDevStateFile(file);
    if (state && alive(state.pid)) states.push(state);
    else if (state) rmSync(file, { force: true });
  }
  return states.sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.pid - a.pid);
}

/** The dev stack the CLI talks to: the newest running one, or undefined when none runs. */
export function readDevState(
  env: Env = process.env,
  alive: (pid: number) => boolean = processAlive,
): DevState | undefined {
  return readDevStates(env, alive)[0];
}

function readDevStateFile(file: string): DevState | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = DevStateSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
