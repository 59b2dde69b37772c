import type { DuraClient } from '@dura/client';
import type { RunEvent } from '@dura/contracts';

/** Exit codes scripts can rely on; `dura --help` and docs/reference.md list them. */
export const EXIT = {
  /** Success; for `run`/`watch`: the run completed. */
  ok: 0,
  /** The run failed, was cancelled or was rejected. */
  runFailed: 1,
  /** Bad flags or missing arguments, or a run id already used by a different request. */
  usage: 2,
  /** The run (or the thing asked for) does not exist. */
  notFound: 3,
  /** NATS or the read API cannot be reached. */
  unreachable: 4,
  /** Anything else. */
  error: 5,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** One flag of a command, in `node:util` parseArgs terms plus what `--help` prints. */
export interface FlagSpec {
  type: 'string' | 'boolean';
  /** One line for `--help`. */
  description: string;
  /** Placeholder shown in `--help` for a string flag, e.g. `SEQ` (default `VALUE`). */
  value?: string;
  short?: string;
  /** The flag may repeat; its value is then a string[]. */
  multiple?: boolean;
}

/** What the command receives: positionals after the command name, and its own flags (global flags removed). */
export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean | string[] | undefined>;
}

/** Output helpers. Human text and JSON both go to stdout; `error` and `note` go to stderr (`note` is silent under --json). */
export interface Output {
  /** One line of human output. */
  line(text?: string): void;
  /** Text without a newline (streamed model tokens); silent under `--json`. */
  write(text: string): void;
  /** One JSON document (pretty when `--json`; use it once per command for non-stream output). */
  json(value: unknown): void;
  /** One compact JSON value per line: for streams under `--json`. */
  jsonLine(value: unknown): void;
  /** An aligned table: `columns` are the header labels, `rows` the cells (already strings). */
  table(columns: readonly string[], rows: readonly (readonly string[])[]): void;
  /** An event as it arrives: a readable line, or a JSON line under `--json`. */
  event(event: RunEvent): void;
  /** A human note on stderr (progress, hints); silent under `--json`. */
  note(text: string): void;
  /** An error line on stderr: say what went wrong and what to do. */
  error(text: string): void;
}

export interface CommandContext {
  /**
   * The SDK client. NATS is connected on the first call that needs it (submitRun, watchRun, getRun, signal,
   * cancel); the read-API calls (listRuns, stateAt, events) use `--api` and never touch NATS.
   */
  client: DuraClient;
  /** `--json` was given: machine output only. */
  json: boolean;
  out: Output;
  /** The resolved `--nats` and `--api` URLs (for messages). */
  natsUrl: string;
  apiUrl: string;
  /** Aborts on SIGINT/SIGTERM: stop following streams and return. */
  signal: AbortSignal;
}

/** A `dura` subcommand. See the comment at the top of commands/index.ts. */
export interface CommandModule {
  /** The word after `dura`, e.g. `get`; the same as its entry's in commands/index.ts. */
  name: string;
  /** Usage lines without the global flags, e.g. `dura get <id> [--at SEQ]`. */
  usage: string;
  /** Optional paragraphs printed after the flags in `dura <name> --help` (examples, exit codes). */
  help?: string;
  /** The command's own flags, by long name (no leading dashes). Global flags are added by the CLI. */
  flags: Record<string, FlagSpec>;
  /** Positional arguments accepted (checked before `run`; too few or too many is a usage error, exit 2). */
  positionals: { min: number; max: number };
  /** Does the work; resolves with the exit code. Throw `UsageError` for bad input, `DuraError` for the rest. */
  run(args: ParsedArgs, ctx: CommandContext): Promise<number>;
}

/**
 * A command as `dura --help` lists it, without loading it: its module (and everything that imports) is loaded
 * only when the command runs or prints its own `--help`.
 */
export interface CommandEntry {
  name: string;
  /** One line for the root `--help`. */
  summary: string;
  load(): Promise<CommandModule>;
}

/** Bad flags or arguments: the CLI prints the message and the command's usage, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
