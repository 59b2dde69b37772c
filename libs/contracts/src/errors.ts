/**
 * The one error base of Dura. `code` is stable and machine-readable; `retryable` tells the runtime
 * whether trying again can help (terminal errors are never retried).
 */
export class DuraError extends Error {
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }

  toJSON(): { name: string; code: string; message: string; retryable: boolean } {
    return { name: this.name, code: this.code, message: this.message, retryable: this.retryable };
  }
}

/** The code of every configuration error: a service that meets one at start stops with exit code 2. */
export const CONFIG_ERROR_CODE = 'config_error';

/** A message that does not match the wire contract; never retryable, because the same bytes fail again. */
export class ContractViolation extends DuraError {
  readonly issues: string[];

  /** `code` names the kind of violation when a caller knows it better (`too_deep`, `invalid_utf8`). */
  constructor(message: string, issues: string[] = [], cause?: unknown, code = 'contract_violation') {
    super(code, message, { retryable: false, cause });
    this.issues = issues;
  }
}
