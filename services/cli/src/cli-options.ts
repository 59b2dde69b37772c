import type { Streams } from './output';

/** How `runCli` is run: its environment, where it writes, and what aborts a command that follows a stream. */
export interface CliOptions {
  env?: Record<string, string | undefined>;
  streams?: Streams;
  /** Aborts commands that follow a stream (Ctrl-C). */
  signal?: AbortSignal;
}
