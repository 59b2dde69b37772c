import { DuraError } from '@dura/contracts';
import { CONFIG_EXIT_CODE, ConfigError } from './config';

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Runs a service entry point: bad configuration exits 2 with the variables to fix, a start-up failure exits 1
 * with what went wrong, and SIGTERM/SIGINT stop the service gracefully (a second signal forces the exit).
 */
export function runMain(service: string, start: () => Promise<Stoppable>): void {
  let stopping = false;
  start()
    .then((running) => {
      const shutdown = (signal: string): void => {
        if (stopping) process.exit(1);
        stopping = true;
        process.stderr.write(`${service}: ${signal} received, draining\n`);
        running.stop().then(
          () => process.exit(0),
          (err: unknown) => {
            process.stderr.write(`${service}: stop failed: ${(err as Error).message}\n`);
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
    })
    .catch((err: unknown) => {
      if (err instanceof ConfigError) {
        process.stderr.write(`${err.message}\n`);
        process.exit(CONFIG_EXIT_CODE);
      }
      const detail =
        err instanceof DuraError ? `${err.code}: ${err.message}` : ((err as Error).stack ?? String(err));
      process.stderr.write(`${service}: failed to start: ${detail}\n`);
      process.exit(1);
    });
}
