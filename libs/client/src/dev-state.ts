import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';

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

/** The state file: $DURA_DEV_STATE_FILE, else ~/.dura/dev.json. */
export function devStateFile(env: Record<string, string | undefined> = process.env): string {
  const override = env.DURA_DEV_STATE_FILE;
  return override !== undefined && override !== '' ? override : join(homedir(), '.dura', 'dev.json');
}

/** Writes the state atomically (a reader never sees half a file). */
export function writeDevState(file: string, state: DevState): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${state.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/** Removes the state file if it still describes the process `pid` (a newer dev stack may have replaced it). */
export function removeDevState(file: string, pid: number): void {
  const state = readDevStateFile(file);
  if (state?.pid === pid) rmSync(file, { force: true });
}

/** The recorded dev stack, or undefined when there is none, the file is unreadable, or its process is gone. */
export function readDevState(
  env: Record<string, string | undefined> = process.env,
  alive: (pid: number) => boolean = processAlive,
): DevState | undefined {
  const state = readDevStateFile(devStateFile(env));
  return state && alive(state.pid) ? state : undefined;
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
