import { runCli } from './cli';

// Ctrl-C stops a command that follows a run; a second Ctrl-C exits at once.
const controller = new AbortController();
let interrupted = false;
const onSignal = (): void => {
  if (interrupted) process.exit(130);
  interrupted = true;
  controller.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// `dura ls | head`: a closed pipe ends the output, not with a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
});

const code = await runCli(process.argv.slice(2), { signal: controller.signal });
process.exit(interrupted ? 130 : code);
