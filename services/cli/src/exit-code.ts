import { ContractViolation, DuraError } from '@dura/contracts';
import { EXIT, UsageError } from './command';

const UNREACHABLE = new Set([
  'nats_unreachable',
  'api_unreachable',
  'stream_unavailable',
  'watch_interrupted',
  'jetstream_disabled',
]);

/** Failures whose fix is usually pointing the CLI at the right NATS server. */
const NATS_RELATED = new Set(['nats_unreachable', 'stream_unavailable', 'jetstream_disabled']);

/** The exit code for an error a command threw, the lines to print on stderr, and whether the NATS URL is suspect. */
export function describeFailure(err: unknown): { code: number; lines: string[]; natsRelated?: boolean } {
  if (err instanceof UsageError) return { code: EXIT.usage, lines: [err.message] };
  if (err instanceof ContractViolation)
    return { code: EXIT.usage, lines: [err.message, ...err.issues.map((issue) => `  ${issue}`)] };
  if (err instanceof DuraError) {
    const code = err.code.endsWith('not_found')
      ? EXIT.notFound
      : err.code === 'run_id_conflict'
        ? EXIT.usage
        : UNREACHABLE.has(err.code)
          ? EXIT.unreachable
          : EXIT.error;
    return { code, lines: [`${err.message} [${err.code}]`], natsRelated: NATS_RELATED.has(err.code) };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    code: EXIT.error,
    lines: [
      `unexpected error: ${message}`,
      'set DURA_DEBUG=1 to print the stack, and report it if it persists',
    ],
  };
}
