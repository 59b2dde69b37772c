import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onProcessExit } from './exit-hooks';
import { createOutputLog } from './output-log';

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A child process owned by a test: output captured, always killed by the end of the test process. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Combined stdout+stderr so far (the last ~200 KB). */
  output(): string;
  /** Resolves with the first match of `pattern`; rejects with the output tail on timeout or early exit. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  readonly exited: Promise<ProcessExit>;
  /** Resolves once the process exited and its stdout and stderr closed: `output()` then holds everything. */
  readonly closed: Promise<ProcessExit>;
  /** Sends `signal` (default SIGTERM) and waits for exit, escalating to SIGKILL after 5 s. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface SpawnManagedOptions {
  name: string;
  command: string;
  args: string[];
  /** Added to process.env; an `undefined` value removes the variable. */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

const KILL_GRACE_MS = 5_000;
// After 'exit' the pipes may still hold the last lines; give them this long before judging the output.
const DRAIN_MS = 200;

/**
 * A dev stack a test starts must not take over the user's `~/.dura/dev.json`, and a CLI a test starts must
 * not find the user's dev stack: unless a test names one, each process gets a state file of its own.
 */
let stateFiles = 0;
function isolatedDevState(): string {
  stateFiles += 1;
  return join(tmpdir(), `dura-test-dev-state-${process.pid}-${stateFiles}.json`);
}

function mergeEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DURA_DEV_STATE_FILE: isolatedDevState() };
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

function firstMatch(text: string, pattern: RegExp): string | undefined {
  // A /g or /y pattern keeps lastIndex between calls; a fresh copy without them matches from the start.
  const plain = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  return plain.exec(text)?.[0];
}

/** Spawns a non-detached child whose output is captured and which is SIGKILLed if this process exits first. */
export function spawnManaged(opts: SpawnManagedOptions): ManagedProcess {
  const { name } = opts;
  const log = createOutputLog(name);
  const child = spawn(opts.command, opts.args, {
    cwd: opts.cwd,
    env: mergeEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: false,
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => log.append(chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => log.append(chunk));

  const unregister = onProcessExit(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn failure (e.g. ENOENT) emits 'error' and never 'exit'.
    child.once('error', (error) => {
      log.append(`[${name}] failed to start: ${error.message}\n`);
      if (child.pid === undefined) resolve({ code: null, signal: null });
    });
  });
  const closed = new Promise<ProcessExit>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
    child.once('error', () => {
      if (child.pid === undefined) resolve({ code: null, signal: null });
    });
  });
  const settled = exited.then(async (result) => {
    unregister();
    await sleep(DRAIN_MS);
    return result;
  });

  function waitForOutput(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
    return new Promise((resolve, reject) => {
      let finished = false;
      const finish = (error: Error | undefined, match?: string) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        unsubscribe();
        if (error) reject(error);
        else resolve(match ?? '');
      };
      const check = () => {
        const match = firstMatch(log.text(), pattern);
        if (match !== undefined) finish(undefined, match);
      };
      const fail = (why: string) =>
        finish(
          new Error(`[${name}] ${why} while waiting for ${String(pattern)}. Output tail:\n${log.tail()}`),
        );
      const unsubscribe = log.onAppend(check);
      const timer = setTimeout(() => fail(`no match within ${timeoutMs} ms`), timeoutMs);
      void settled.then(({ code, signal }) => {
        check();
        fail(`exited (code ${code}, signal ${signal})`);
      });
      check();
    });
  }

  async function kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    child.kill(signal);
    const timedOut = await Promise.race([
      exited.then(() => false),
      sleep(KILL_GRACE_MS, undefined, { ref: false }).then(() => true),
    ]);
    if (timedOut) {
      child.kill('SIGKILL');
      await exited;
    }
  }

  return {
    name,
    pid: child.pid ?? -1,
    output: () => log.text(),
    waitForOutput,
    exited,
    closed,
    kill,
  };
}
