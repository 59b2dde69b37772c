import { DuraError } from '@dura/contracts';

/** Error codes the client raises besides `contract_violation` (bad input) and `stream_unavailable` (JetStream). */
export const CLIENT_ERROR_CODES = {
  runNotFound: 'run_not_found',
  natsUnreachable: 'nats_unreachable',
  natsNotConfigured: 'nats_not_configured',
  apiUnreachable: 'api_unreachable',
  apiNotConfigured: 'api_not_configured',
  badApiResponse: 'bad_api_response',
  watchInterrupted: 'watch_interrupted',
} as const;

/** The run has no events (or none at the sequence asked for). Check the run id; `listRuns` shows known runs. */
export class RunNotFound extends DuraError {
  readonly runId: string;

  constructor(runId: string, message?: string, cause?: unknown) {
    super(
      CLIENT_ERROR_CODES.runNotFound,
      message ?? `run ${runId} has no events: check the run id (listRuns / \`dura ls\` shows known runs)`,
      { cause },
    );
    this.runId = runId;
  }
}

/** The NATS server did not accept a connection. Retry later, or point the client at the right server. */
export class NatsUnreachable extends DuraError {
  constructor(url: string, cause?: unknown) {
    const why = cause instanceof Error ? ` (${cause.message})` : '';
    super(
      CLIENT_ERROR_CODES.natsUnreachable,
      `cannot reach NATS at ${url}${why}: start nats-server with JetStream (-js) or set NATS_URL / --nats`,
      { retryable: true, cause },
    );
  }
}

/** A call needs something the client was created without (JetStream handles or `apiUrl`). Fix the options. */
export class ClientNotConfigured extends DuraError {
  constructor(code: 'nats_not_configured' | 'api_not_configured', message: string) {
    super(code, message);
  }
}

/** The projector's read API did not answer (connection refused, timeout). Retry later or check `apiUrl`. */
export class ApiUnreachable extends DuraError {
  readonly url: string;

  constructor(url: string, cause?: unknown) {
    const why = cause instanceof Error ? ` (${describe(cause)})` : '';
    super(
      CLIENT_ERROR_CODES.apiUnreachable,
      `cannot reach the Dura read API at ${url}${why}: start the projector (it listens on PROJECTOR_HTTP_PORT) or set DURA_API_URL / --api`,
      { retryable: true, cause },
    );
    this.url = url;
  }
}

/**
 * The read API answered with an error `{ error: { code, message } }` (code kept as is), or with a body this
 * client cannot read (`bad_api_response`: is `apiUrl` a Dura projector of a matching version?).
 */
export class ApiError extends DuraError {
  readonly status: number;

  constructor(code: string, message: string, status: number, retryable = status >= 500) {
    super(code, message, { retryable });
    this.status = status;
  }
}

function describe(err: Error): string {
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
