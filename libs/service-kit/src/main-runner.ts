import { CONFIG_ERROR_CODE, DuraError } from '@dura/contracts';
import { CONFIG_EXIT_CODE } from './config';

/** When a stopping service must be done (epoch ms). */
export interface StopOptions {
  /** Work still running then is handed back to the stream. */
  deadline: number;
  /** Flushing (the outbox, say) ends by then; the rest of the grace period is for closing connections. */
  flushBy: number;
}

export interface Stoppable {
  /** Takes no new work, finishes or hands back what is running by the deadline, flushes, and closes. */
  stop(drain?: StopOptions): Promise<void>;
  /** How long the process may take to stop after SIGTERM (`SHUTDOWN_GRACE_MS`); 25 s when unset. */
  graceMs?: number;
}

/** Below Kubernetes' default terminationGracePeriodSeconds (30 s), so the kubelet never has to SIGKILL. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;
const MAX_FLUSH_MARGIN_MS = 5_000;

/**
 * The deadlines of a stop signalled at `signalAt`: in-flight work gets the grace period minus a margin (a
 * quarter of it, at most 5 s); flushing gets the first half of that margin, closing and telemetry the rest.
 */
export function drainDeadline(signalAt: number, graceMs: number): StopOptions {
  const margin = Math.min(MAX_FLUSH_MARGIN_MS, Math.round(graceMs / 4));
  const end = signalAt + graceMs;
  return { deadline: end - margin, flushBy: end - Math.round(margin / 2) };
}

export interface ShutdownPorts {
  exit(code: number): void;
  write(text: string): void;
  now(): number;
}

const processPorts: ShutdownPorts = {
  exit: (code) => process.exit(code),
  write: (text) => process.stderr.write(text),
  now: () => Date.now(),
};

/**
 * The stop-signal handler of a running service. The first signal drains (exit 0 once `stop` resolves, 1
 * if it fails or outlasts the grace period); a second one exits at once.
 */
export function shutdownHandler(
  service: string,
  running: Stoppable,
  ports: ShutdownPorts = processPorts,
): (signal: string) => void {
  let stopping = false;
  return (signal) => {
    if (stopping) {
      ports.write(`${service}: ${signal} received again; exiting now without finishing the drain\n`);
      ports.exit(1);
      return;
    }
    stopping = true;
    const graceMs = running.graceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    const began = ports.now();
    const drain = drainDeadline(began, graceMs);
    ports.write(
      `${service}: ${signal} received, draining (in-flight work has ${drain.deadline - began} ms, the process ${graceMs} ms)\n`,
    );
    const forced = setTimeout(() => {
      ports.write(
        `${service}: not stopped within the ${graceMs} ms grace period (SHUTDOWN_GRACE_MS); exiting with work in flight, which is redelivered after its ack wait\n`,
      );
      ports.exit(1);
    }, graceMs);
    forced.unref();
    running.stop(drain).then(
      () => {
        clearTimeout(forced);
        ports.write(`${service}: drained in ${ports.now() - began} ms\n`);
        ports.exit(0);
      },
      (err: unknown) => {
        clearTimeout(forced);
        ports.write(`${service}: stop failed: ${(err as Error).message}\n`);
        ports.exit(1);
      },
    );
  };
}

/**
 * Runs a service entry point: bad configuration exits 2 with the variables to fix, a start-up failure exits 1
 * with what went wrong, and SIGTERM/SIGINT drain the service within its grace period (a second signal forces
 * the exit).
 */
export function runMain(service: string, start: () => Promise<Stoppable>): void {
  // Installed before starting: a service still waiting for NATS or Postgres has nothing to drain and must stop
  // at once when asked, not sit out the grace period until the kubelet's SIGKILL.
  let shutdown: ((signal: string) => void) | undefined;
  const onSignal = (signal: string) => {
    if (shutdown) return shutdown(signal);
    process.stderr.write(
      `${service}: ${signal} received while starting; exiting (nothing was started to drain)\n`,
    );
    process.exit(0);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  start()
    .then((running) => {
      shutdown = shutdownHandler(service, running);
    })
    .catch((err: unknown) => {
      // ConfigError, and a library's own config errors (a malformed secrets key): they share one code.
      if (err instanceof DuraError && err.code === CONFIG_ERROR_CODE) {
        process.stderr.write(`${err.message}\n`);
        process.exit(CONFIG_EXIT_CODE);
      }
      const detail =
        err instanceof DuraError ? `${err.code}: ${err.message}` : ((err as Error).stack ?? String(err));
      process.stderr.write(`${service}: failed to start: ${detail}\n`);
      process.exit(1);
    });
}
